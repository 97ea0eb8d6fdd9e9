"""The floor of memory/: pieces that know no layer, imported by every room above.

- ``atomic``: temp + fsync + rename, private directories, symlink-refusing opens.
- ``authority_table``: the plain table of who may write which area (no pydantic; the
  fast friction path reads it); ``policy`` (in ``canon/``) loads the human's edits of it.
- ``bounds``: the limits one event or note must keep (size, one line, a reflected day).
- ``yamlio``: round-trip parsing of the human's YAML, with line numbers in errors.
- ``redact``: masking secrets (the full detector and the standard-library fast path).
- ``similarity``: one normal form and character n-grams, in any language.
- ``fastargv``: the argv pieces the standard-library fast paths share.
- ``live_listing``: the Live Bus directory listing, shared by ``ops.live`` and boot.
- ``fasthash``: sha1 and sha256 without OpenSSL's start-up, for the fast paths.

Nothing here imports another part of memory/ (an import-linter contract keeps it so).
"""
