"""Human review: the only door from the monthly queue into Canon, and Canon's history.

``models``   file formats shared with the weekly and monthly jobs (the diff itself and
             its application live below, in :mod:`evolving_agent.memory.canon_diff`)
``store``    the queue as the human sees it (ids, statuses, edits, decisions)
``approve``  the approval transaction (limit, removal check, decision, monthly write)
``actions``  edit and reject
``view``     what ``review show`` presents
``history``  ``canon log / diff / revert``
"""
