"""The friction fast path: ``evolving-agent friction TEXT`` with the standard library only.

A friction write is what a session hook or an assistant runs mid-conversation, and the
full path imports click, pydantic and the whole writer before it appends one line.
This module appends the same record through the same code: the same checks
(:mod:`~evolving_agent.memory.base.bounds`: the root, empty or oversized text, a one-line
``--session``, a day already reflected), the same permission (the actor, and the write
table of the last writer commit's ``policy.yaml``), the same redaction, and the same
chain writer (:mod:`~evolving_agent.memory.evidence.chain`: flock, hash chain, fsync, anchor,
torn tails, symlink and hard-link refusal).  The record's bytes are the full path's:
``verify`` recomputes its hash through the pydantic models.

It gives up before writing anything - and the caller runs the full CLI, which then
words the error exactly as always - whenever anything is unusual: an option it does
not know (``--help``, ``--supports``/``--contradicts``, which look up the register), a
check that fails, a policy that may override a grant (anything but the plain shape
:func:`~evolving_agent.memory.base.authority_table.grants_nothing` accepts), a root whose
Canon cannot be read.  Once it appends, it does not give up: an error then is printed
the way the CLI prints it, with its exit code, so nothing is written twice.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from evolving_agent.errors import EvolvingAgentError
from evolving_agent.memory.base.authority_table import ACTORS, DEFAULT_WRITE, grants_nothing
from evolving_agent.memory.base.bounds import check_fields, check_text, refuse_reflected_day
from evolving_agent.memory.base.fastargv import plain_call
from evolving_agent.memory.base.redact import redact
from evolving_agent.memory.evidence.chain import HEADS, Body, Chain, now, ts_json
from evolving_agent.paths import MemoryRoot, root_problem
from evolving_agent.textsafe import neutralise

RAISE_ENV = "EVOLVING_AGENT_RAISE"
# Copy of memory.policy.POLICY_FILE (that module needs pydantic).
POLICY_FILE = "policy.yaml"


@dataclass
class Request:
    text: str | None = None
    root: str | None = None
    session: str | None = None
    actor: str = "session"


# Options the fast path serves (anything else, --supports included, goes the full path).
_AFTER = ("--root", "--session", "--as")


def parse_argv(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> Request | None:
    """``[--root R] friction TEXT [--session S] [--as ACTOR] [--root R]``, in any order
    after ``friction``; None for anything else, and while debugging with
    ``$EVOLVING_AGENT_RAISE``."""
    if environ.get(RAISE_ENV):
        return None
    call = plain_call(argv, "friction", _AFTER, arguments=1)
    if call is None or not call[1]:
        return None
    values, (text,) = call
    actor = values.get("--as", "session")
    if actor not in ACTORS:
        return None  # click's choice error words it
    return Request(
        text=text, root=values.get("--root"), session=values.get("--session"), actor=actor
    )


def _policy_grants_nothing(root: MemoryRoot) -> bool:
    """Whether the policy the writer would load leaves the default write table."""
    from evolving_agent.memory.canon.canon_snapshot import load_canon

    # As memory.policy.Policy.load: the Canon of the last writer commit, not hand edits.
    data = load_canon(root).files.get(POLICY_FILE)
    return data is None or grants_nothing(data)


def try_friction(argv: list[str]) -> int | None:
    """Append ``evolving-agent friction TEXT`` from the fast path and return its exit
    code; None when the full path must run (nothing was written then)."""
    req = parse_argv(argv, os.environ)
    if req is None:
        return None
    try:
        root = MemoryRoot.resolve(req.root)  # a vanished cwd raises: the full path words it
        text = req.text or ""
        if root_problem(root) is not None or not text.strip():
            return None
        check_text(text)
        check_fields(session=req.session)
        ts = now()
        refuse_reflected_day(root, ts)
        if not _policy_grants_nothing(root) or req.actor not in DEFAULT_WRITE["evidence"]:
            return None
        body: Body = {
            "ts": ts_json(ts),
            "kind": "friction",
            "actor": req.actor,
            "text": redact(text),
            "session": redact(req.session) if req.session is not None else None,
            "supports": None,
            "contradicts": None,
            "data": {},
        }
    except Exception:  # noqa: BLE001 - refused or unexpected: the full path words it
        return None
    # The point of no return: from here on, the CLI's wording, never a second write.
    try:
        chain = Chain(root, root.evidence, HEADS)
        sealed, _ = chain.append(ts.date(), [body], repair_actor=req.actor, repair_ts=ts)
    except EvolvingAgentError as exc:
        sys.stderr.write(f"error: {neutralise(str(exc))}\n")
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - the CLI's last-resort wording
        sys.stderr.write(
            f"error: unexpected {type(exc).__name__}: {neutralise(str(exc))} "
            f"(set {RAISE_ENV}=1 to see the traceback)\n"
        )
        return 1
    try:
        sys.stdout.write(sealed[-1]["id"] + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        os._exit(1)  # a reader closed stdout early: exit 1 quietly, as the full path does
    return 0
