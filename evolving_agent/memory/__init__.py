"""The memory root: four layers behind one permission-checked writer, and what reads them.

Writing: ``authority`` (the ``Writer``: policy check, path confinement, atomic write,
git commit for tracked files) with ``policy`` (who may write and read what; the plain
table in ``authority_table``), ``atomic`` (temp + fsync + rename) and ``gitrepo`` (the
root's own repository).  Layers:
``canon`` / ``canon_diff`` / ``canon_edit`` / ``canon_snapshot`` (the identity, its
diffs, the human's edits, the snapshot boot trusts), ``evidence`` and ``events``
(the append-only hash chain and what appends to it; ``chain`` writes the day files,
``bounds`` checks an event's limits, ``frictionfast`` appends a friction event with
the standard library only, ``fastargv`` holds the fast paths' shared argv pieces),
``live`` (the Live Bus), ``today`` (bias and carry), ``hypotheses`` (the register, a fold
over Evidence), ``approvals``.
Reading: ``boot`` (the session's context; ``bootview`` renders it, ``bootfast`` serves it
with the standard library only) and ``verify`` (provenance and tampering).  ``root``
creates and finds a root, ``redact`` masks secrets, ``yamlio`` parses the human's YAML.
"""
