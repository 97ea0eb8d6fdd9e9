"""The options ``search run`` and ``search compare`` share: what the task is, which
agent works on it, its budget and timeouts.

``task_options`` declares them once and hands the command one ``settings`` dict of
``SearchConfig`` fields (``--token-prices`` already parsed), so the two commands
cannot drift apart in names, defaults or parsing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from evolving_agent.errors import UsageError

_OPTIONS = (
    click.option(
        "--candidate",
        required=True,
        type=click.Path(path_type=Path),
        help="Directory holding the seed candidate.",
    ),
    click.option(
        "--task",
        required=True,
        type=click.Path(path_type=Path),
        help="File with the task instructions every agent gets.",
    ),
    click.option(
        "--score",
        "score_cmd",
        required=True,
        help="Score command; runs inside a clean export of the candidate (see "
        "--score-cwd) with $EA_CANDIDATE set to it ({candidate} is replaced too); "
        "the files it names are sealed; last stdout line = score.",
    ),
    click.option(
        "--score-cwd",
        default=None,
        type=click.Path(path_type=Path),
        help="Run the score command in DIR instead of inside the candidate's export.",
    ),
    click.option("--minimize", is_flag=True, help="Lower scores are better."),
    click.option(
        "--agent",
        required=True,
        help=(
            "claude | codex | command | tsp-example (tsp-example only knows the bundled "
            "example; the old name builtin still works)."
        ),
    ),
    click.option(
        "--agent-cmd",
        default=None,
        help="Command for --agent command (or the claude/codex/gemini/opencode executable).",
    ),
    click.option(
        "--agent-args",
        default=None,
        help="Arguments for new sessions (defaults: claude --permission-mode acceptEdits, "
        'codex -c sandbox_mode="workspace-write"), e.g. "--model sonnet".',
    ),
    click.option(
        "--agent-resume-args",
        default=None,
        help="Arguments for continued sessions (default: derived from --agent-args; "
        "codex exec resume takes fewer options than codex exec).",
    ),
    click.option(
        "--retries",
        default=2,
        show_default=True,
        type=int,
        help="Retries of a turn whose agent failed transiently (429, 529, overloaded, network).",
    ),
    click.option(
        "--retry-backoff",
        default=10.0,
        show_default=True,
        type=float,
        metavar="S",
        help="Seconds before the first retry; doubles each time.",
    ),
    click.option(
        "--budget-usd", default=None, type=float, help="Dollar cap per run, split over rounds."
    ),
    click.option(
        "--budget-tokens", default=None, type=int, help="Token cap per run, split over rounds."
    ),
    click.option(
        "--forget-on-plateau",
        default=None,
        type=int,
        metavar="K",
        help="Also forget after K turns without team improvement, or when edits shrink to "
        "empty turns.",
    ),
    click.option("--score-timeout", default=60.0, show_default=True, type=float),
    click.option("--turn-timeout", default=600.0, show_default=True, type=float),
    click.option(
        "--score-repeats",
        default=1,
        show_default=True,
        type=int,
        help="Score each candidate N times and keep the median; the seed's spread "
        "is the noise floor an improvement must beat.",
    ),
    click.option(
        "--sandbox",
        type=click.Choice(["bwrap", "none"]),
        default=None,
        help="Confine command agents and scorers with bubblewrap (default: bwrap when "
        "it is installed): an agent sees its workspace, the files its command names and "
        "the system; a scorer the candidate's export and its own files.",
    ),
    click.option(
        "--sandbox-net",
        type=click.Choice(["on", "off"]),
        default="on",
        show_default=True,
        help="Network for agents under bwrap (scorers never get one).",
    ),
    click.option(
        "--sandbox-ro",
        multiple=True,
        metavar="PATH",
        help="Also show PATH read-only inside the sandbox (repeatable), e.g. a venv.",
    ),
    click.option(
        "--sandbox-rw",
        multiple=True,
        metavar="PATH",
        help="Also show PATH read-write inside the sandbox (repeatable), e.g. ~/.cache.",
    ),
    click.option(
        "--holdout",
        "holdout_cmd",
        default=None,
        metavar="CMD",
        help="A second sealed scorer the agents never see (other instances, a stricter "
        "verifier). The candidate a round restarts from must pass it: the holdout gives "
        "it a number no worse than the previous restart seed's holdout score by more "
        "than --holdout-margin; else the run restarts from the best candidate that "
        "does. The report shows reported - holdout per round and an alarm when the "
        "reported best climbs while the holdout does not.",
    ),
    click.option(
        "--holdout-margin",
        default=0.0,
        show_default=True,
        type=float,
        metavar="X",
        help="How much worse (in the holdout's units) a restart seed's holdout score may "
        "be than the previous one's.",
    ),
    click.option(
        "--token-prices",
        default=None,
        help="JSON (or JSON file) of USD per million tokens for codex: "
        '{"input": 1.25, "cached_input": 0.125, "output": 10}.',
    ),
)
_FIELDS = (
    "candidate",
    "task",
    "score_cmd",
    "minimize",
    "agent",
    "agent_cmd",
    "agent_args",
    "agent_resume_args",
    "score_cwd",
    "retries",
    "retry_backoff",
    "budget_usd",
    "budget_tokens",
    "forget_on_plateau",
    "score_timeout",
    "turn_timeout",
    "score_repeats",
    "token_prices",
    "sandbox",
    "sandbox_net",
    "sandbox_ro",
    "sandbox_rw",
    "holdout_cmd",
    "holdout_margin",
)


def _is_file(value: str) -> bool:
    try:
        return Path(value).is_file()
    except OSError:
        return False  # longer than a file name may be (ENAMETOOLONG): inline JSON


def token_prices(value: str | None) -> dict[str, float] | None:
    """``--token-prices``: inline JSON or a JSON file mapping token kinds to USD."""
    if value is None:
        return None
    text = Path(value).read_text() if _is_file(value) else value
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--token-prices must be JSON or a JSON file: {exc.msg}") from None
    if not isinstance(data, dict) or not all(isinstance(v, int | float) for v in data.values()):
        raise UsageError('--token-prices must map names to numbers, e.g. {"output": 10}')
    return {str(k): float(v) for k, v in data.items()}


def task_options(fn: Callable[..., None]) -> Callable[..., None]:
    """Add the shared options; ``fn`` gets them as ``settings`` (SearchConfig fields).

    Put it right under ``@click.command`` so the shared options lead the ``--help``.
    """

    @functools.wraps(fn)
    def command(**kwargs: Any) -> None:
        settings = {name: kwargs.pop(name) for name in _FIELDS}
        settings["token_prices"] = token_prices(settings["token_prices"])
        settings["sandbox_net"] = settings["sandbox_net"] == "on"
        for name in ("sandbox_ro", "sandbox_rw"):
            settings[name] = [str(Path(p).expanduser().absolute()) for p in settings[name]]
        fn(settings=settings, **kwargs)

    # click lists options in the reverse order they were added to __click_params__
    for option in reversed(_OPTIONS):
        command = option(command)
    return command
