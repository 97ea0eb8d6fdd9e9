"""evolving-agent: a self that grows slowly and safely, and a forgetting search loop.

Where a change goes:

- ``memory/`` the memory root (layers, the one writer, Evidence, boot, verify);
  ``jobs/`` the slow clocks (nightly, weekly, monthly, the scheduler); ``reflectors/``
  who writes a night's bias; ``review/`` the human's queue and Canon's history;
  ``probes/`` whether a new model still reads Canon as meant; ``integrations/`` the MCP
  server and the session hook.
- ``search/`` the forgetting search loop; it imports nothing of the memory side.
- ``cli/`` the commands (parse, call one core function, print); ``launch`` the console
  script (boot's fast path, else the CLI); ``demo`` the simulated month.
- Shared by both sides, one of each: ``paths`` (where things live), ``errors`` (named
  errors, exit codes), ``process`` (every child process) and ``gitcmd`` (every git
  call), ``fsio`` (the atomic writer and the tree walker), ``registry`` (backends by
  name), ``results`` (results that carry their messages), ``textsafe`` (text made safe
  for a terminal), ``extras`` (optional dependencies and their one-line error).
"""

__version__ = "0.1.0"
