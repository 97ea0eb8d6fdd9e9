"""Boot: the context a session starts with, and the fast path that serves it.

- ``boot``: building the boot context from Canon, Today and the Live Bus (the full path,
  which refreshes the cache the fast path reads).
- ``bootfast``: serving that context with the standard library only (``python -m
  evolving_agent boot``, the SessionStart hook): what every session pays first.
- ``bootview``: reading Today and rendering the context, shared by both paths.

Reads every layer below (``ops``, ``authority``, ``root``, ``evidence``, ``canon``,
``base``); nothing in memory/ imports boot back.
"""
