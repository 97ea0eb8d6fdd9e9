"""Run the shell blocks of a Markdown page as a reader pastes them (tests/test_doc_blocks.py).

No maintained doc-test tool fits shell pages: pytest-markdown-docs and phmdoctest run
Python fences only, and mktestdocs runs a ``bash`` fence with ``bash -e -c`` in the test's
own directory and environment, never compares output and has no ``console`` prompts.  So
this is a thin runner of our own:

* ``bash``/``sh``/``shell`` blocks: every line (``\\``-continued lines joined; comments and
  blank lines skipped) is one command and must exit 0.
* ``console`` blocks: each ``$ `` line is a command; the lines after it, if any, are its
  output (stdout and stderr interleaved, as a terminal shows them), compared line by line
  after :func:`varying` blanks what differs on every run (times, event ids, commits). A
  ``...`` line stands for any number of lines.  Its exit status is shown by ``echo $?``
  on the page, not assumed.
* A block preceded by ``<!-- not run: REASON -->`` is shown to the reader only (it needs an
  editor, a second machine, root, a cluster or a paid model, or it *is* the suite).
* ``<NAME>`` placeholders (``<REVIEW_ID>``, ``<RUN_DIR>``, ``<COMMIT>``, ``<PROGRAM>``,
  ``<TODAY>``) are filled in from the root the page works on, by the commands in
  :data:`PLACEHOLDERS`, run in the page's shell at that point, in a command and in the
  output shown after it; the page says where the reader finds them.

All of a page's blocks run in order in one :class:`Shell`, which keeps what a line
``export``s or ``cd``s into, like one terminal.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

SHELL_LANGS = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^([ \t]*)```(\w*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.S | re.M)
# The comment right before the block: its reason never runs past a "-->" (an earlier one).
MARKER = re.compile(r"<!--\s*not run:\s*((?:(?!-->).)*?)\s*-->\s*\Z", re.S)
PLACEHOLDER = re.compile(r"<([A-Z][A-Z_]+)>")

# What a reader looks up, and where: the page names the command beside the placeholder.
PLACEHOLDERS = {
    "PROGRAM": "command -v evolving-agent",
    "ROOT": 'echo "$EVOLVING_AGENT_ROOT"',
    "REVIEW_ID": "evolving-agent review list --ids | head -n 1",
    "PENDING_REVIEW_ID": "evolving-agent review list --pending --ids | head -n 1",
    "RUN_DIR": "ls -d runs/*/ | head -n 1",
    "COMMIT": "evolving-agent canon log | head -n 1 | cut -d' ' -f1",
    "TODAY": "date +%F",
}


@dataclass(frozen=True)
class Step:
    command: str
    expected: list[str] | None  # None: the page shows no output for it


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    body: str
    not_run: str | None  # the reason, when the block is shown only

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def steps(self) -> list[Step]:
        if self.lang == "console":
            return console_steps(self.body)
        return [Step(c, None) for c in bash_commands(self.body)]


def blocks(page: Path) -> list[Block]:
    """Every shell block of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        indent, lang, body = match.groups()
        if lang not in SHELL_LANGS:
            continue
        before = text[: match.start()]
        marker = MARKER.search(before)
        found.append(
            Block(
                page.name,
                before.count("\n") + 1,
                lang,
                textwrap.dedent(body) if indent else body,
                marker.group(1) if marker else None,
            )
        )
    return found


def bash_commands(body: str) -> list[str]:
    joined = re.sub(r"[ \t]*\\\n\s*", " ", body)
    return [c for c in joined.splitlines() if c.strip() and not c.lstrip().startswith("#")]


def console_steps(body: str) -> list[Step]:
    steps: list[tuple[str, list[str]]] = []
    for line in re.sub(r"[ \t]*\\\n\s*", " ", body).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return [Step(c, out or None) for c, out in steps]


def varying(line: str) -> str:
    """A line with what differs on every run blanked: clock times, event ids, commits,
    ports and tokens."""
    line = re.sub(r"\b\d\d:\d\d:\d\d\b", "HH:MM:SS", line)
    line = re.sub(r"\bev-[0-9a-f]{12}\b", "ev-ID", line)
    line = re.sub(r"\b[0-9a-f]{10}\b", "COMMIT", line)
    line = re.sub(r"\b(nightly|weekly|monthly)-[0-9a-f]{12}\b", r"\1-RUN", line)
    line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line)
    return re.sub(r"token=[\w-]+", "token=TOKEN", line)


def matches(shown: list[str], expected: list[str]) -> bool:
    """``shown`` is ``expected``, line by line after :func:`varying`; ``...`` skips lines."""
    pattern = "".join(
        r"(?:.*\n)*?" if line == "..." else re.escape(varying(line)) + r"\n" for line in expected
    )
    return re.fullmatch(pattern, "".join(varying(x) + "\n" for x in shown)) is not None


@dataclass
class Shell:
    """Runs lines as bash does, in one directory and environment, like one terminal.

    Each line runs in its own ``bash -c``; what it exports, unsets or ``cd``s into is read
    back afterwards, and ``$?`` is the last line's status.  stdin is a terminal holding
    one ``y``, the answer to a confirmation prompt (``review approve``).
    """

    cwd: Path
    env: dict[str, str]
    status: int = 0
    state: Path = field(init=False)

    def __post_init__(self) -> None:
        self.state = Path(self.env["HOME"]) / ".doc-shell-state"

    def fill(self, line: str) -> str:
        """``line`` with each ``<NAME>`` placeholder replaced by its value in this root."""

        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in PLACEHOLDERS:
                return match.group(0)
            proc = self._bash(PLACEHOLDERS[name], track=False)
            found = proc.stdout.strip().rstrip("/")
            assert proc.returncode == 0 and found, f"no value for <{name}>: {proc.stdout}"
            return shlex.quote(found)

        return PLACEHOLDER.sub(value, line)

    def run(self, line: str) -> subprocess.CompletedProcess[str]:
        proc = self._bash(self.fill(line), track=True)
        self.status = proc.returncode
        return proc

    def _bash(self, line: str, *, track: bool) -> subprocess.CompletedProcess[str]:
        env_file, cwd_file = self.state.with_suffix(".env"), self.state.with_suffix(".cwd")
        save = f"env -0 > {shlex.quote(str(env_file))}; pwd > {shlex.quote(str(cwd_file))}"
        script = f"trap {shlex.quote(save)} EXIT\n(exit {self.status})\n{line}\n"
        master, slave = os.openpty()
        try:
            os.write(master, b"y\n")
            proc = subprocess.run(
                ["bash", "-c", script],
                cwd=self.cwd,
                env=self.env,
                stdin=slave,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,  # interleaved, as a terminal shows them
                text=True,
                timeout=600,
            )
        finally:
            os.close(slave)
            os.close(master)
        if track and env_file.exists():
            pairs = env_file.read_bytes().split(b"\0")
            self.env = dict(
                p.decode().split("=", 1) for p in pairs if b"=" in p and not p.startswith(b"_=")
            )
            for name in ("SHLVL", "PWD", "OLDPWD"):
                self.env.pop(name, None)
            self.cwd = Path(cwd_file.read_text().strip())
        return proc
