"""sha1 and sha256 for the standard-library fast paths, without OpenSSL's start-up.

``import hashlib`` loads ``_hashlib`` (OpenSSL) and ``_blake2``: a few ms of every boot,
for hashing a few small Canon files.  CPython's own implementations (``_sha1``, and
``_sha2`` or ``_sha256`` before Python 3.12) load in a fraction of that and give the
same digests; where an interpreter lacks them, hashlib stands in.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time (mypy reads this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Hash = Callable[[bytes], Any]


def _constructor(name: str, modules: tuple[str, ...]) -> Hash:
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    import hashlib

    return getattr(hashlib, name)


sha1: Hash = _constructor("sha1", ("_sha1",))
sha256: Hash = _constructor("sha256", ("_sha2", "_sha256"))
