"""Human review: the only door from the monthly queue into Canon, and Canon's history.

``models``   file formats shared with the weekly and monthly jobs (the diff itself and
             its application live below, in :mod:`evolving_agent.memory.canon.canon_diff`)
``store``    the queue as the human sees it (ids, statuses, edits, decisions)
``approve``  the approval transaction (limit, removal check, decision, monthly write)
``actions``  edit and reject
``view``     what ``review show`` presents
``history``  ``canon log / diff / revert``
``drift``    the drift watch: pendulums, monopolised carry, stopped or flooding friction,
             stale reviews, fallbacks; each flag cites its evidence and may hold a review
``hold``     the drift watch's hold: the one rule the monthly queue, ``review approve``
             and the page share, and ``drift ack`` (the human's look, a decision file)
``glance``   the month at a glance (per day, per hypothesis, Canon changes, two answers)
``web``      ``review serve``: the owner's page over all of the above (the ``[review]``
             extra; imported only by that command)
"""
