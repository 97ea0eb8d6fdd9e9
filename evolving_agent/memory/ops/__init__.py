"""Ops: what writes the layers through the Writer (``authority``), one verb each.

- ``events``: appending to Evidence from outside: friction, raw and journal events, imports.
- ``canon_edit``: the human's edits of the Canon, committed.
- ``live``: the Live Bus (``live/KEY.json``), set, read and cleared.
- ``today``: Today: the bias (2-3 executable lines) and one typed carry-forward.
- ``carry``: which hypothesis is carried into today, and as which of the nine types.
- ``hypotheses``: the register, a fold over Evidence (propose, move, retire, show).
- ``review_trace``: review provenance: is a pending review one a job really queued?

Imports ``authority`` and ``root`` and everything below them; read by ``boot``,
``verify`` and the jobs above.
"""
