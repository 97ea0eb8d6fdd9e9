"""Canon: the identity the human wrote, the policy beside it, and how boot trusts them.

- ``canon``: the assistant's identity (``canon/identity.yaml``), written by the human.
- ``policy``: who may write and read what (``canon/policy.yaml`` over the table in
  ``base.authority_table``); loaded from the Canon the writer last committed.
- ``probe_file``: ``canon/probes.yaml``, the probes the human asks the agent to pass.
- ``canon_diff``: the diff a review proposes to the Canon, and applying it.
- ``approvals``: the human's decision on such a review, good for one Canon commit.
- ``canon_snapshot``: the snapshot of the last committed Canon that boot serves.
- ``gitrepo``: the root's own git repository (commits, trailers, blobs): the one git reader;
  ``gitformat`` its I/O-free part (a blob's id, a commit's trailers) for boot's fast path.
- ``signing``: signed writer commits, and checking them.

Imports only ``base`` below it; what writes the Canon is ``ops.canon_edit`` through the
Writer (``authority``).
"""
