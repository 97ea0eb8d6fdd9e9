"""Named errors and their exit codes (``evolving_agent/errors.py``) against the CLI contract."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError, field_validator

import evolving_agent
from evolving_agent import cli, errors
from evolving_agent.cli import _Group
from evolving_agent.errors import (
    EvolvingAgentError,
    InvalidInput,
    InvalidPath,
    MissingExtra,
    NotFound,
    ReadOutOfScope,
    TamperingFound,
    UsageError,
    WriteDenied,
    first_error,
)

REPO = Path(__file__).resolve().parents[1]
# One line, the way a user types a name or path.
WORD = st.text(st.characters(exclude_categories=["Cc", "Cs", "Zl", "Zp"]), min_size=1, max_size=30)


def _documented_codes() -> dict[int, str]:
    """README's one-line contract: ``Exit codes: 0 ok · 1 unexpected failure · …``."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    line = text.split("Exit codes:", 1)[1].split("`EVOLVING_AGENT_RAISE", 1)[0]
    return {int(code): meaning.strip() for code, meaning in re.findall(r"(\d) ([^·]+)", line)}


def _every_error_class() -> set[type[EvolvingAgentError]]:
    for info in pkgutil.walk_packages(evolving_agent.__path__, "evolving_agent."):
        if info.name != "evolving_agent.__main__":
            importlib.import_module(info.name)
    found: set[type[EvolvingAgentError]] = set()
    todo = [EvolvingAgentError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_the_constants_are_the_documented_codes() -> None:
    documented = _documented_codes()
    assert documented.keys() == {0, 1, 2, 3, 4, 5}
    assert (errors.EXIT_OK, errors.EXIT_FAILURE, errors.EXIT_USAGE) == (0, 1, 2)
    assert (errors.EXIT_DENIED, errors.EXIT_INVALID, errors.EXIT_TAMPERED) == (3, 4, 5)
    assert documented[3].startswith("denied") and documented[5].endswith("tampering.")
    assert errors.EXIT_INTERRUPTED == 128 + 2  # what a shell reports for SIGINT


def test_each_family_has_the_exit_code_its_meaning_says() -> None:
    assert UsageError.exit_code == errors.EXIT_USAGE
    assert WriteDenied.exit_code == ReadOutOfScope.exit_code == errors.EXIT_DENIED
    for cls in (InvalidInput, InvalidPath, NotFound, MissingExtra):
        assert cls.exit_code == errors.EXIT_INVALID, cls
    assert TamperingFound.exit_code == errors.EXIT_TAMPERED


def test_every_error_in_the_package_exits_with_a_documented_failure_code() -> None:
    classes = _every_error_class()
    assert len(classes) > 9  # subsystems add their own beside these
    documented = set(_documented_codes()) - {errors.EXIT_OK}
    assert {cls: cls.exit_code for cls in classes if cls.exit_code not in documented} == {}


@pytest.mark.parametrize(
    "exc",
    [
        UsageError("bad --limit"),
        WriteDenied("session", "canon", "identity.md"),
        ReadOutOfScope("nightly", "canon"),
        InvalidInput("not YAML", file="canon/x.yaml", line=3),
        NotFound("no review 'rev-1'"),
        MissingExtra("the review page", "review", "jinja2"),
        TamperingFound(["evidence/2026-10-01.jsonl: line 2 changed"]),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_the_cli_exits_with_the_errors_own_code_and_prints_its_message(
    exc: EvolvingAgentError, monkeypatch: pytest.MonkeyPatch
) -> None:
    @click.group(cls=_Group)
    def group() -> None:
        pass

    @group.command()
    def fail() -> None:
        raise exc

    # The top-level group's own error mapping, with one command that only raises.
    monkeypatch.setitem(cli.COMMAND_MODULES, "fail", "fail_cmds")
    monkeypatch.setattr(group, "_loaded", {"fail_cmds"})
    result = CliRunner().invoke(group, ["fail"])
    assert result.exit_code == exc.exit_code
    assert result.stderr.splitlines()[0] == f"error: {str(exc).splitlines()[0]}"


@given(actor=WORD, layer=WORD, relpath=WORD, reason=WORD)
def test_write_denied_names_actor_layer_and_path_on_one_line(
    actor: str, layer: str, relpath: str, reason: str
) -> None:
    exc = WriteDenied(actor, layer, relpath, reason)
    assert str(exc) == f"write denied: actor '{actor}' may not write {layer}/{relpath}: {reason}"
    assert str(WriteDenied(actor, layer, relpath)).endswith(f"{layer}/{relpath}")
    assert (exc.actor, exc.layer, exc.relpath, exc.reason) == (actor, layer, relpath, reason)


@given(message=WORD, file=WORD, line=st.none() | st.integers(1, 10**6))
def test_invalid_input_says_where_before_what(message: str, file: str, line: int | None) -> None:
    exc = InvalidInput(message, file=file, line=line)
    where = file if line is None else f"{file}:{line}"
    assert str(exc) == f"{where}: {message}"
    assert (exc.file, exc.line) == (file, line)
    assert str(InvalidInput(message)) == message


def test_invalid_path_missing_extra_and_tampering_build_their_own_message() -> None:
    assert str(InvalidPath("canon", "../x", "leaves the layer")) == (
        "invalid path '../x' for layer 'canon': leaves the layer"
    )
    assert str(MissingExtra("search", "search", "numpy")) == (
        "search needs numpy, which is not installed: pip install 'evolving-agent[search]'"
    )
    found = TamperingFound(["a", "b"])
    assert str(found) == "verify found 2 problem(s):\na\nb" and found.problems == ["a", "b"]
    assert str(ReadOutOfScope("nightly", "canon", "slow clock")) == (
        "read denied: actor 'nightly' may not read layer 'canon' (slow clock)"
    )


class _Card(BaseModel):
    class Inner(BaseModel):
        weight: int

    inner: Inner
    name: str

    @field_validator("name")
    @classmethod
    def _short(cls, value: str) -> str:
        if len(value) > 3:
            raise ValueError("at most 3 characters")
        return value


def _error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Card.model_validate(data)
    return info.value


def test_first_error_is_the_dotted_field_and_pydantics_message() -> None:
    assert first_error(_error({"inner": {"weight": "x"}, "name": "a"})) == (
        "inner.weight: Input should be a valid integer, unable to parse string as an integer"
    )
    long_name = _error({"inner": {"weight": 1}, "name": "abcd"})
    assert first_error(long_name) == "name: Value error, at most 3 characters"
    assert first_error(long_name, bare=True) == "name: at most 3 characters"


def test_first_error_names_the_whole_when_the_error_has_no_field() -> None:
    not_a_mapping = _error([1, 2])
    assert first_error(not_a_mapping, whole="(record)").startswith("(record): Input should be")
    assert not first_error(not_a_mapping).startswith(":")
