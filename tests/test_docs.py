"""The docs and the CLI agree: every command has --help, every quoted command line parses.

Command lines are collected from the docs' shell, console, Markdown, JSON and TOML code
blocks and from inline code in prose; each ``evolving-agent …`` invocation is resolved
in the real click tree and parsed by click (options, choices, argument counts) without
running it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from tests.helpers import docblocks
from tests.helpers.commands import ALL_COMMANDS, command_at
from tests.helpers.fixtures import KeptDemo, copy_tree
from tests.helpers.roots import fresh_root

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = {
    "README.md",
    "architecture.md",
    "authority.md",
    "cycle.md",
    "search.md",
    "integrations.md",
    "openai-loop.md",
    "left-out.md",
    "troubleshooting.md",
    "jobs.md",
    "review.md",
    "probes.md",
}

SHELL_LANGS = {"bash", "sh", "shell", "console", "markdown", "md"}
OPERATORS = {"|", "||", "&", "&&", ";", "(", ")", "<", ">", ">>", "2>", "$("}


# -- the click tree ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL_COMMANDS, ids=lambda p: " ".join(p) or "(top)")
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="evolving-agent")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: {' '.join(('evolving-agent', *path))} ")


LEAVES = [p for p in ALL_COMMANDS if p and not isinstance(command_at(p), click.Group)]


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_every_command_shows_an_example_of_itself(path: tuple[str, ...]) -> None:
    output = CliRunner().invoke(cli, [*path, "--help"], prog_name="evolving-agent").output
    assert "Example" in output
    assert f"evolving-agent {' '.join(path)}" in output.split("Example", 1)[1]


def test_the_integration_commands_are_registered() -> None:
    assert {("mcp",), ("boot",), ("friction",), ("live", "set")} <= set(ALL_COMMANDS)


# -- collecting command lines from the docs ---------------------------------------------


@dataclass(frozen=True)
class Quoted:
    where: str
    argv: tuple[str, ...]  # the tokens after 'evolving-agent'
    # Prose may name a command without its required options ("`evolving-agent search
    # run`"); code blocks are lines people paste, so they must parse completely.
    partial: bool = False
    # A usage synopsis ("run nightly [--date YYYY-MM-DD] [--json]"): the command path and
    # every option name must be real; placeholders are not parsed as values.
    synopsis: bool = False


FENCE = re.compile(r"^[ \t]*```(\w*)[^\n]*\n(.*?)^[ \t]*```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")
SUBSHELL = re.compile(r"\$\((evolving-agent [^)]*)\)")


SAMPLES = {"TODAY": "2026-11-30"}


def split_shell(text: str) -> list[str]:
    # A `<NAME>` placeholder (docblocks.PLACEHOLDERS) is one word, not two redirections;
    # a date's stands for a date.
    text = docblocks.PLACEHOLDER.sub(lambda m: SAMPLES.get(m.group(1), m.group(1)), text)
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def invocations(tokens: list[str]) -> Iterator[tuple[str, ...]]:
    """Each 'evolving-agent …' that starts a command (not e.g. a server name)."""
    at_start = True
    for i, tok in enumerate(tokens):
        if tok in OPERATORS or tok == "--":
            at_start = True
            continue
        if at_start and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tok):
            continue  # VAR=value before the command
        if at_start and (tok.rsplit("/", 1)[-1] == "evolving-agent" or tok == "PROGRAM"):
            rest = []
            for t in tokens[i + 1 :]:
                if t in OPERATORS:
                    break
                rest.append(t)
            yield tuple(rest)
        at_start = False


OPTIONAL = re.compile(r"\[([^\]]*)\]")


def unbracket(line: str) -> tuple[str, bool]:
    """A synopsis line without its [optional] brackets ('a|b' inside become 'a,b')."""
    plain = OPTIONAL.sub(lambda m: m.group(1).replace("|", ","), line)
    return plain, plain != line


def shell_lines(lang: str, body: str) -> Iterator[str]:
    joined = re.sub(r"\\\n\s*", " ", body)
    for line in joined.splitlines():
        stripped = line.strip()
        if lang == "console":
            if stripped.startswith("$ "):
                yield stripped[2:]
        elif lang in {"markdown", "md"}:
            if stripped.startswith("evolving-agent "):
                yield stripped
        else:
            yield stripped


def json_commands(data: Any) -> Iterator[list[str]]:
    if isinstance(data, dict):
        command = data.get("command")
        if isinstance(command, str):
            args = data.get("args")
            yield [command, *args] if isinstance(args, list) else split_shell(command)
        for value in data.values():
            yield from json_commands(value)
    elif isinstance(data, list):
        for item in data:
            yield from json_commands(item)


def quoted_commands(page: Path) -> Iterator[Quoted]:
    text = page.read_text(encoding="utf-8")
    for match in FENCE.finditer(text):
        lang, body = match.group(1).lower(), match.group(2)
        where = f"{page.name}:{text.count(chr(10), 0, match.start()) + 1}"
        lines: list[str] = []
        token_lists: list[list[str]] = []
        if lang in SHELL_LANGS or lang == "":
            lines += shell_lines(lang, body)
            lines += SUBSHELL.findall(body)
            if lang in {"markdown", "md"}:
                lines += INLINE.findall(body)
        elif lang == "json":
            token_lists += list(json_commands(json.loads(body)))
        elif lang == "toml":
            token_lists += list(json_commands(tomllib.loads(body)))
        for line in lines:
            plain, synopsis = unbracket(line)
            for argv in invocations(split_shell(plain)):
                yield Quoted(where, argv, synopsis=synopsis)
        for tokens in token_lists:
            for argv in invocations(tokens):
                yield Quoted(where, argv)
    prose = FENCE.sub("", text)
    for span in INLINE.findall(prose):
        if span.startswith("evolving-agent"):
            plain, synopsis = unbracket(span)
            for argv in invocations(split_shell(plain)):
                yield Quoted(f"{page.name} (inline)", argv, partial=True, synopsis=synopsis)


def all_quoted() -> list[Quoted]:
    pages = [*sorted(DOCS.glob("*.md")), DOCS.parent / "README.md"]
    return [q for page in pages for q in quoted_commands(page)]


# -- checking one command line ----------------------------------------------------------


def check(argv: tuple[str, ...], *, partial: bool = False, synopsis: bool = False) -> None:
    """Raises AssertionError naming what is wrong with a documented command line."""
    command: click.Command = cli
    path: list[str] = []
    i = 0
    while isinstance(command, click.Group) and i < len(argv):
        tok = argv[i]
        if tok.startswith("-"):
            if tok in {"--help", "-h"}:
                return
            opt = next((p for p in command.params if tok.split("=")[0] in p.opts), None)
            assert opt is not None, f"no option {tok} on '{' '.join(path) or 'evolving-agent'}'"
            takes_value = isinstance(opt, click.Option) and not opt.is_flag and "=" not in tok
            i += 2 if takes_value else 1
            continue
        sub = command.get_command(click.Context(command), tok)
        if sub is None:
            raise AssertionError(f"no command '{' '.join([*path, tok])}'")
        path.append(tok)
        command = sub
        i += 1
    if isinstance(command, click.Group):
        return  # a bare group prints its help
    if synopsis:
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        for tok in argv[i:]:
            name = tok.split("=")[0]
            if name.startswith("-") and name not in known | {"--help", "-h"}:
                raise AssertionError(f"'{' '.join(path)}': no option {name}")
        return
    try:
        command.make_context(" ".join(path), list(argv[i:]))
    except click.exceptions.Exit:
        pass  # --help
    except click.UsageError as exc:
        if partial and isinstance(exc, click.MissingParameter):
            return
        raise AssertionError(f"'{' '.join(path)}': {exc.format_message()}") from None


QUOTED = all_quoted()


def test_docs_quote_many_commands() -> None:
    # Guards the collector itself: if parsing broke, the check below would pass vacuously.
    assert len(QUOTED) >= 60
    assert {q.argv[:1] for q in QUOTED} >= {("boot",), ("mcp",), ("friction",), ("live",)}


@pytest.mark.parametrize(
    "quoted", QUOTED, ids=[f"{q.where} {' '.join(q.argv)[:50]}" for q in QUOTED]
)
def test_every_documented_command_is_real(quoted: Quoted) -> None:
    check(quoted.argv, partial=quoted.partial, synopsis=quoted.synopsis)


def test_the_checker_rejects_what_is_not_there() -> None:
    with pytest.raises(AssertionError, match="no command 'frob'"):
        check(("frob",))
    with pytest.raises(AssertionError, match="No such option '--colour'"):
        check(("boot", "--colour"))
    with pytest.raises(AssertionError, match="'yaml' is not one of"):
        check(("boot", "--format", "yaml"))
    with pytest.raises(AssertionError, match="Missing argument 'TEXT'"):
        check(("friction",))
    check(("friction",), partial=True)  # passes
    with pytest.raises(AssertionError, match="No such option '--colour'"):
        check(("boot", "--colour"), partial=True)
    with pytest.raises(AssertionError, match="no command 'hypothesis lst'"):
        check(("hypothesis", "lst"))
    check(("boot", "--format", "FORMAT"), synopsis=True)  # passes
    with pytest.raises(AssertionError, match="no option --colour"):
        check(("boot", "--colour"), synopsis=True)
    check(("--root", "/tmp/m", "boot", "--format", "claude-hook"))  # passes
    check(("live", "set", "thread", "x"))  # passes


# -- the snippets people copy -----------------------------------------------------------


def fenced(page: str, lang: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return [body for found, body in FENCE.findall(text) if found == lang]


def test_every_page_exists_and_relative_links_resolve() -> None:
    assert {p.name for p in DOCS.glob("*.md")} >= PAGES
    for page in DOCS.glob("*.md"):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text("utf-8")):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_claude_settings_snippet_is_a_session_start_hook() -> None:
    # (Gemini CLI's settings have a SessionStart hook too, and no "permissions".)
    blocks = fenced("integrations.md", "json")
    settings = [json.loads(b) for b in blocks if '"hooks"' in b and '"permissions"' in b]
    assert len(settings) == 1
    (entry,) = settings[0]["hooks"]["SessionStart"]
    (hook,) = entry["hooks"]
    assert hook["type"] == "command"
    argv = split_shell(hook["command"])
    # The root rides in the command (the hook's environment may lack $EVOLVING_AGENT_ROOT).
    assert argv[:3] == ["PROGRAM", "--root", "ROOT"]
    assert argv[3:6] == ["boot", "--format", "claude-hook"]
    assert "async" not in hook


def test_integrations_page_has_the_mcp_add_line_and_the_import_fallback() -> None:
    text = (DOCS / "integrations.md").read_text(encoding="utf-8")
    assert "claude mcp add --scope user evolving-agent -- <PROGRAM> --root <ROOT> mcp\n" in text
    (claude_md,) = [b for b in fenced("integrations.md", "markdown") if "\n@" in b]
    (imported,) = re.findall(r"^@(\S+)$", claude_md, re.M)
    assert f"evolving-agent boot --write-file {imported}\n" in text


def test_python_snippet_in_integrations_runs(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")  # $EVOLVING_AGENT_ROOT points here (conftest)
    (snippet,) = fenced("integrations.md", "python")
    namespace: dict[str, Any] = {}
    exec(compile(snippet, "integrations.md", "exec"), namespace)  # noqa: S102 - our own doc

    assert namespace["system_prompt"].startswith("# Boot context: Assistant\n")
    (rec,) = list(EvidenceLog(MemoryRoot(root.path)).iter_all())
    assert (rec.kind, rec.actor) == ("friction", "session")
    assert (root.live / "thread.json").exists()


def test_architecture_stack_names_every_layer_of_the_import_contract() -> None:
    # A newcomer read a stack without `launch` (the console script) above cli: the picture
    # drifted from .importlinter, the contract it claims to show.
    import configparser

    contract = configparser.ConfigParser()
    contract.read(DOCS.parent / ".importlinter")
    layers = contract["importlinter:contract:stack"]["layers"].split()
    names = {m.rsplit(".", 1)[-1] for m in layers if m.startswith("evolving_agent.")}
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    (stack,) = [b for lang, b in FENCE.findall(text) if lang == "text" and " cli " in b]
    drawn = {w for line in stack.splitlines() for w in re.findall(r"^ (\w+)", line)}
    drawn |= {w for line in stack.splitlines() for w in re.findall(r"│ (\w+)", line)}
    assert names <= drawn, f"missing from the stack picture: {sorted(names - drawn)}"
    package = DOCS.parent / "evolving_agent"
    top = {p.stem for p in package.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    top -= {"__init__", "__main__"}
    assert top <= drawn, f"modules not in the stack picture: {sorted(top - drawn)}"


def test_boot_json_keys_are_the_documented_ones(tmp_path: Path) -> None:
    # A newcomer saw a `stale` key in `boot --format json` that integrations.md never named.
    text = (DOCS / "integrations.md").read_text(encoding="utf-8")
    (comment,) = re.findall(r"boot --format json +# ([^\n]*?) —", text)
    documented = {k.strip() for k in comment.split(",")}
    (sentence,) = re.findall(r"The JSON\s+also holds (.*?)\.\n", text, re.S)
    documented |= set(re.findall(r"`(\w+)` ?(?:\(|,| and)", sentence + ","))
    root = fresh_root(tmp_path / "memory")
    result = CliRunner().invoke(cli, ["--root", str(root.path), "boot", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.output)) == documented


def test_readme_lists_every_benchmark() -> None:
    # A newcomer reading the README's Benchmarks never learnt of bench_boot.py, the one
    # issue 14's boot target is measured with.
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"benchmarks/(bench_\w+\.py)", readme))
    present = {p.name for p in (DOCS.parent / "benchmarks").glob("bench_*.py")}
    assert present == listed


CODE_PATH = re.compile(
    r"`((?:evolving_agent/|benchmarks/|tests/|docs/)?"
    r"(?:cli|memory|jobs|review|reflectors|search|integrations|executors|agents|[a-z_]+\.py)"
    r"[a-z_/]*?(?:\.py)?)`"
)


def test_every_module_path_the_docs_name_exists() -> None:
    # Modules were renamed this session (jobs/runner.py -> jobs/dispatch.py, jobs/runs.py ->
    # jobs/markers.py, memory/reviews.py -> memory/canon/approvals.py); a page naming the old
    # file sends a newcomer to nothing.
    package = DOCS.parent / "evolving_agent"
    bases = [DOCS.parent, package, package / "search"]
    missing = []
    for page in [*sorted(DOCS.glob("*.md")), DOCS.parent / "README.md"]:
        for path in CODE_PATH.findall(page.read_text(encoding="utf-8")):
            if not path.endswith(".py") or "/" not in path:
                continue
            if not any((base / path).exists() for base in bases):
                missing.append(f"{page.name}: {path}")
    assert missing == []


def test_the_module_path_check_sees_a_stale_name() -> None:
    assert CODE_PATH.findall("see `jobs/runner.py` and `evolving_agent/memory/reviews.py`") == [
        "jobs/runner.py",
        "evolving_agent/memory/reviews.py",
    ]


# -- the shell blocks, run as pasted ----------------------------------------------------

# Pages that make their own root start with none set, so a block that forgets to use it
# fails instead of quietly working on another root (integrations.md once booted the
# demo's); every other page runs where the README's tour leaves a reader: in the demo's
# root, $EVOLVING_AGENT_ROOT exported.
OWN_ROOT = {"integrations.md", "openai-loop.md", "sync.md"}
README_TOUR = "## A 2-minute tour"  # run by tests/test_readme_tour.py, in one go


def shell_pages() -> list[Path]:
    return [p for p in sorted(DOCS.glob("*.md")) if docblocks.blocks(p)]


@dataclass
class PageRun:
    ran: int = 0
    failed: list[str] = field(default_factory=list)


def run_page(page: Path, home: Path, demo: Path) -> PageRun:
    """Every block of ``page`` not marked 'not run', in order, in one shell: a fresh HOME,
    a directory laid out like a clone (examples/, docs/examples/) holding the demo."""
    clone = home / "evolving-agent"
    (clone / "docs").mkdir(parents=True)
    (clone / "examples").symlink_to(REPO / "examples")
    (clone / "docs" / "examples").symlink_to(DOCS / "examples")
    copy_tree(demo, clone / "demo")
    env = {**os.environ, "HOME": str(home), "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    for name in ("EVOLVING_AGENT_ROOT", "VISUAL", "EDITOR", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    if page.name not in OWN_ROOT:
        env["EVOLVING_AGENT_ROOT"] = str(clone / "demo" / "memory")
    shell = docblocks.Shell(clone, env)
    result = PageRun()
    for block in docblocks.blocks(page):
        if block.not_run is not None:
            continue
        result.ran += 1
        for step in block.steps():
            proc = shell.run(step.command)
            shown = proc.stdout.replace(str(home), "~").splitlines()  # as a reader's page says
            if step.expected is not None:
                expected = [shell.fill(line) for line in step.expected]
                ok = docblocks.matches(shown, expected)
            else:
                ok = proc.returncode == 0 and "warning:" not in proc.stdout
            if not ok:
                result.failed.append(f"{block.where}: $ {step.command}\n{proc.stdout}")
                break
    return result


REPO = DOCS.parent
VENV_BIN = Path(sys.executable).parent


def test_every_shell_block_is_run_or_says_why_not() -> None:
    # A block is either run below or marked `<!-- not run: REASON -->` with a reason a
    # reader can act on; README.md's tour is run by tests/test_readme_tour.py.
    for page in [*shell_pages(), REPO / "README.md"]:
        text = page.read_text(encoding="utf-8")
        tour = text.split(README_TOUR, 1)[1].split("\n## ", 1)[0] if README_TOUR in text else ""
        for block in docblocks.blocks(page):
            if block.body in tour:
                continue
            if block.not_run is not None:
                assert len(block.not_run) > 10, f"{block.where}: say why it is not run"


def test_the_block_runner_compares_what_it_should() -> None:
    assert docblocks.matches(["error: x", "3"], ["error: x", "3"])
    assert not docblocks.matches(["error: y", "3"], ["error: x", "3"])
    assert not docblocks.matches(["error: x"], ["error: x", "3"])
    assert docblocks.matches(["a", "b", "c", "d"], ["a", "...", "d"])
    assert docblocks.matches(
        ["04:06:22 ev-09c003948a3d write-denied"], ["11:00:01 ev-000000000000 write-denied"]
    )
    (block,) = docblocks.blocks(_page("<!-- not run: needs a second machine -->\n```sh\nx\n```\n"))
    assert block.not_run == "needs a second machine"
    steps = docblocks.blocks(_page("```console\n$ a \\\n  b\nout\n$ c\n```\n"))[0].steps()
    assert steps == [docblocks.Step("a b", ["out"]), docblocks.Step("c", None)]


def _page(text: str) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "page.md"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("page", shell_pages(), ids=lambda p: p.name)
def test_every_shell_block_of_the_page_runs_as_written(
    page: Path, tmp_path: Path, kept_demo: KeptDemo
) -> None:
    result = run_page(page, tmp_path / "home", kept_demo.directory)
    assert result.failed == []
    assert result.ran == sum(b.not_run is None for b in docblocks.blocks(page))


def test_the_readme_set_up_installs_extras_that_exist_and_the_review_page() -> None:
    # A newcomer's `review serve` at the end of the tour found no [review]: the set-up
    # line had installed only [search].
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (extras,) = re.findall(
        r"pip install -e '\.\[([\w,]+)\]' && \.venv/bin/evolving-agent demo", readme
    )
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert {"search", "review"} <= set(extras.split(",")) <= set(declared["optional-dependencies"])
