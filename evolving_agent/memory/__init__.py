"""The memory root: four layers behind one permission-checked writer, and what reads them.

The rooms, from the top down; each imports only the rooms below it (the
``memory-rooms`` layers contract in ``.importlinter``), so the floor a change belongs
on is the lowest room that has everything it needs:

- ``sync/``: one self on several devices through a git remote; ``deploy``, one root
  shared by the human's and the assistant's OS users.
- ``boot/`` (the context a session starts with, and its standard-library fast path) |
  ``verify`` (is every byte where the writer put it: provenance and tampering).
- ``ops/``: what writes through the Writer, one verb each: events, the Canon edit, the
  Live Bus, Today and carry, the hypothesis register, review provenance.
- ``authority`` (the ``Writer``: policy check, path confinement, atomic write, git commit
  for tracked files; the read-scoped job context) | ``root`` (creating a root, finding
  one, its recorded deployment).
- ``evidence/``: the append-only hash chain, its day stream and digest, the fast friction
  path, devices.
- ``canon/``: the identity, the policy, the probes file, Canon diffs, their approvals and
  snapshots, signing, and the root's git repository.
- ``base/``: atomic files, the authority table, event bounds, YAML, redaction,
  similarity, the fast paths' argv, the Live Bus listing.
"""
