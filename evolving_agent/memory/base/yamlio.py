"""YAML files that people edit: round-trip loading with errors that name file and line.

ruamel.yaml in round-trip mode keeps the human's comments, key order and layout, so a
file the product rewrites (Canon on an approved review) still reads like theirs.

Round-trip parsing is slow (a few ms for a Canon file) and one command reads the same
schedule and policy several times, so parsed documents are kept by their text and each
caller gets its own deep copy (about a fifth of the cost): an edit is a new text.

ruamel is imported on the first parse, not with this module: many commands import a
model that could be read from YAML and never read one (``hypothesis list``, ``evidence
show``), and ruamel is about a tenth of such a command's CPU.
"""

from __future__ import annotations

import copy
import functools
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from evolving_agent.errors import InvalidInput, first_error

if TYPE_CHECKING:
    from ruamel.yaml import YAML

M = TypeVar("M", bound=BaseModel)


def round_trip_yaml() -> YAML:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    return yaml


def parse_yaml(text: str, *, file: Path | str) -> Any:
    """Parse YAML text; a syntax error becomes InvalidInput naming file and line."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        if "<<" in text:  # a deep copy would spell out merged keys and drop the anchors
            return round_trip_yaml().load(text)
        return copy.deepcopy(_parsed(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "malformed YAML"
        raise InvalidInput(f"malformed YAML: {problem}", file=file, line=line) from None
    except YAMLError as exc:
        raise InvalidInput(f"malformed YAML: {exc}", file=file) from None


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> Any:
    """The document ``text`` holds; never handed out itself (callers may change theirs)."""
    return round_trip_yaml().load(text)


def load_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("not UTF-8 text", file=path) from None
    return parse_yaml(text, file=path)


def dump_yaml(data: Any) -> str:
    buf = io.StringIO()
    round_trip_yaml().dump(data, buf)
    return buf.getvalue()


def line_of(data: Any, loc: tuple[int | str, ...]) -> int | None:
    """Best-effort line number of a validation error's field, from ruamel's marks."""
    node = data
    line: int | None = None
    for key in loc:
        lc = getattr(node, "lc", None)
        try:
            if lc is not None:
                if isinstance(key, int):
                    line = lc.item(key)[0] + 1
                else:
                    line = lc.key(key)[0] + 1
            node = node[key]
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    return line


def validate(model: type[M], data: Any, *, file: Path | str) -> M:
    """Validate parsed YAML against a model; errors name file, line and field."""
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as exc:
        loc = tuple(exc.errors()[0]["loc"])
        raise InvalidInput(
            first_error(exc, whole="(top level)"), file=file, line=line_of(data, loc)
        ) from None


def load_model(model: type[M], path: Path) -> M:
    return validate(model, load_yaml(path), file=path)
