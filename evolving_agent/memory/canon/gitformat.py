"""Git's formats as boot reads them, with no I/O: a blob's id and a commit's trailers.

Split from :mod:`gitrepo` (which re-exports both) so the Canon snapshot check on boot's
fast path imports neither gitrepo's plumbing nor hashlib.
"""

from __future__ import annotations

from evolving_agent.memory.base.fasthash import sha1


def blob_sha(data: bytes) -> str:
    """The git blob id of ``data`` (what ``git hash-object`` prints)."""
    return str(sha1(b"blob %d\0" % len(data) + data).hexdigest())


def parse_trailers(message: str) -> dict[str, str]:
    """Trailers of a commit message: 'Key: value' lines of the last paragraph."""
    paragraphs = [p for p in message.strip().split("\n\n") if p.strip()]
    if not paragraphs:
        return {}
    out: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            out[key] = value.strip()
    return out
