"""Evidence: the append-only, hash-chained record of what happened, and its readers.

- ``evidence``: the records and drafts, :class:`EvidenceLog` (append, read, seal, repair)
  and the day a record counts on (``day_key``, ``recorded_day``).
- ``chain``: the day files themselves (hash chain, anchors, torn tails, safe opens), on
  plain JSON so the fast friction path appends without pydantic.
- ``frictionfast``: ``evolving-agent friction TEXT`` with the standard library only.
- ``day_stream``: one day read lazily, each line checked against the one before it.
- ``day_digest``: what the nightly job keeps of one day, bounded however large it is.
- ``devices``: one self on several machines, each device appending to its own chain,
  and which device writes Today.

Imports only ``canon`` and ``base`` below it.  Appending with a permission check is the
Writer's (``authority``); what appends events is in ``ops``.
"""
