"""The MCP tools as data: name, description, argument schema, annotations, handler.

Clients decide from this table alone whether a model may call a tool without asking:
Codex in ``codex exec`` (approval policy "never") rejects any call it thinks needs
approval, and reads the MCP annotations to decide, so every tool says what it does —
``readOnlyHint`` for ``boot`` and ``hypotheses``, ``destructiveHint: false`` for the
appends (nothing is ever overwritten in Evidence), ``idempotentHint`` where a repeat
changes nothing more (``live_set``), ``openWorldHint: false`` everywhere (only the
local memory root is touched).  Descriptions are dedented and every argument carries
its own description; ``stakes`` is an enum.

The handlers import :class:`~evolving_agent.integrations.session_tools.SessionTools`
(pydantic, the memory package) only when a tool is first called, so the server can
answer ``initialize`` and ``tools/list`` with the standard library alone.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evolving_agent.integrations.session_tools import SessionTools

INSTRUCTIONS = inspect.cleandoc(
    """
    Your long-term memory (evolving-agent). Call `boot` at the start of a session if the
    boot context is not already in your prompt. Call `friction` only when something
    really felt off — no quota; a day with none is fine. Use `live_set` to note where
    work stopped. You act as 'session': you cannot change your identity (Canon) or
    today's bias yourself. A hypothesis or counter-move you write is a proposal: it
    reaches the bias only after friction supports it on 2 distinct days, or when the
    human adopts it.
    """
)

HYPOTHESIS_ID = "A hypothesis id from the `hypotheses` tool, e.g. 'h-3'."


class ToolInputError(ValueError):
    """A tool call's arguments do not fit its schema (missing, wrong type, not allowed)."""


@dataclass(frozen=True)
class Arg:
    """One argument: JSON type ``string``, its description, and allowed values if any."""

    name: str
    description: str
    required: bool = False
    enum: tuple[str, ...] = ()
    default: str | None = None

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string", "description": self.description}
        if self.enum:
            out["enum"] = list(self.enum)
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    args: tuple[Arg, ...]
    annotations: dict[str, bool]
    run: Callable[[SessionTools, dict[str, str | None]], Any]
    output_schema: dict[str, Any] | None = field(default=None)

    def listing(self) -> dict[str, Any]:
        """This tool as ``tools/list`` shows it."""
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {a.name: a.schema() for a in self.args},
            "additionalProperties": False,
        }
        required = [a.name for a in self.args if a.required]
        if required:
            schema["required"] = required
        out: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": schema,
            "annotations": {"title": self.title, **self.annotations},
        }
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        return out

    def arguments(self, given: object) -> dict[str, str | None]:
        """The call's arguments checked against the schema.

        Unknown names are dropped, not refused: a model that adds ``actor`` still acts as
        ``session`` (no argument chooses the actor), and the call is not lost over it.
        ``null`` counts as not given.
        """
        if given is None:
            given = {}
        if not isinstance(given, dict):
            raise ToolInputError(f"{self.name}: arguments must be an object")
        out: dict[str, str | None] = {}
        for arg in self.args:
            value = given.get(arg.name)
            if value is None:
                if arg.required:
                    raise ToolInputError(f"{self.name}: missing required argument {arg.name!r}")
                out[arg.name] = arg.default
                continue
            if not isinstance(value, str):
                raise ToolInputError(f"{self.name}: {arg.name!r} must be a string")
            if arg.enum and value not in arg.enum:
                allowed = ", ".join(arg.enum)
                raise ToolInputError(f"{self.name}: {arg.name!r} must be one of: {allowed}")
            out[arg.name] = value
        return out


def _text(value: str | None) -> str:
    return value or ""


def _dump(value: Any) -> Any:
    """A pydantic result as plain JSON data (strings stay strings)."""
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def _object_schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


_STR = {"type": "string"}
_OPT_STR = {"type": ["string", "null"]}
_HYP = _object_schema({"id": _STR, "text": _STR, "state": _STR}, ["id", "text", "state"])

# What a tool does, as its MCP annotations say it (see the module docstring).
READS = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}
APPENDS = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": False,
    "openWorldHint": False,
}
SETS = {**APPENDS, "idempotentHint": True}  # a repeat changes nothing more

TOOLS: tuple[Tool, ...] = (
    Tool(
        name="friction",
        title="Record friction",
        description=inspect.cleandoc(
            """
            Append a friction event to Evidence: something that really felt off just now.

            Example text: "started writing 'or you could also…' but the user had not
            asked for options, so I stopped". There is no quota; do not invent friction.
            `warnings` in the answer names any cited hypothesis id that is not in the
            register (the event is kept; no job counts it).
            """
        ),
        args=(
            Arg("text", "What felt off, concretely, in one or two sentences.", required=True),
            Arg("supports", "Optional. " + HYPOTHESIS_ID + " This event supports it."),
            Arg("contradicts", "Optional. " + HYPOTHESIS_ID + " This event contradicts it."),
            Arg("session", "Optional. Your session id, if you know it."),
        ),
        # An append: never overwrites, so not destructive; a repeat appends again.
        annotations=APPENDS,
        run=lambda t, a: t.friction(
            _text(a["text"]),
            supports=a["supports"],
            contradicts=a["contradicts"],
            session=a["session"],
        ),
        output_schema=_object_schema(
            {
                "id": _STR,
                "actor": _STR,
                "ts": _STR,
                "supports": _OPT_STR,
                "contradicts": _OPT_STR,
                "warnings": {"type": "array", "items": _STR},
            },
            ["id", "actor", "ts"],
        ),
    ),
    Tool(
        name="live_set",
        title="Note on the Live Bus",
        description=inspect.cleandoc(
            """
            Set a Live Bus entry (what is going on now), replacing any earlier value of
            the same key. Use it to note where work stopped.
            """
        ),
        args=(
            Arg(
                "key",
                "Entry name: letters, digits, '.', '_' or '-' (max 64), e.g. 'thread'.",
                required=True,
            ),
            Arg(
                "text",
                "What is going on, e.g. 'refactoring the parser; stopped at the failing tests'.",
                required=True,
            ),
        ),
        # Replaces only its own key's note (the old value stays in git history);
        # the same call twice leaves the same state.
        annotations=SETS,
        run=lambda t, a: t.live_set(_text(a["key"]), _text(a["text"])),
        output_schema=_object_schema(
            {"key": _STR, "text": _STR, "actor": _STR, "updated": _STR}, ["key", "text"]
        ),
    ),
    Tool(
        name="boot",
        title="Read the boot context",
        description=inspect.cleandoc(
            """
            Today's boot context as Markdown: identity (Canon), today's bias and
            carry-forward, and the Live Bus. Follow the bias.
            """
        ),
        args=(),
        annotations=READS,
        run=lambda t, a: t.boot(),
    ),
    Tool(
        name="hypotheses",
        title="List hypotheses",
        description=inspect.cleandoc(
            """
            The hypothesis register: each hypothesis's id, text and state (emerging,
            live, weakening, split, retired). Use an id with `friction`'s `supports` /
            `contradicts`.
            """
        ),
        args=(),
        annotations=READS,
        run=lambda t, a: t.hypotheses(),
        output_schema=_object_schema(
            {"hypotheses": {"type": "array", "items": _HYP}}, ["hypotheses"]
        ),
    ),
    Tool(
        name="hypothesis_add",
        title="Raise a hypothesis",
        description=inspect.cleandoc(
            """
            Raise a hypothesis you noticed about how you work with this user (state
            emerging). Recorded as session; the next nightly run adds it to the
            register, and it is carried only once evidence supports it. Only for a
            pattern, never a quota.
            """
        ),
        args=(
            Arg("text", "The pattern, in one sentence.", required=True),
            Arg("when", "Optional. The moment it matters (the trigger)."),
            Arg("do", "Optional. What to do then (the counter-move)."),
            Arg(
                "stakes",
                "'high' when a slip is hard to undo or seen by others, else 'low'.",
                enum=("low", "high"),
                default="low",
            ),
        ),
        annotations=APPENDS,
        run=lambda t, a: t.hypothesis_add(
            _text(a["text"]), when=a["when"], do=a["do"], stakes=a["stakes"] or "low"
        ),
        output_schema=_HYP,
    ),
    Tool(
        name="hypothesis_propose",
        title="Propose a trigger or counter-move",
        description=inspect.cleandoc(
            """
            Propose a trigger (`when`) and/or counter-move (`do`) for an existing
            hypothesis, typically one the nightly job raised from recurring friction.
            Recorded as the session's proposal: it is used only once friction supports
            the hypothesis on 2 distinct days from now, or when the human adopts it.
            """
        ),
        args=(
            Arg("hypothesis", HYPOTHESIS_ID, required=True),
            Arg("when", "Optional. The moment it matters (the trigger)."),
            Arg("do", "Optional. What to do then (the counter-move)."),
        ),
        # An append of a proposal record: nothing is overwritten.
        annotations=APPENDS,
        run=lambda t, a: t.hypothesis_propose(_text(a["hypothesis"]), when=a["when"], do=a["do"]),
        output_schema=_object_schema(
            {"id": _STR, "hypothesis": _STR, "when": _OPT_STR, "do": _OPT_STR, "note": _STR},
            ["id", "hypothesis", "note"],
        ),
    ),
)

BY_NAME = {t.name: t for t in TOOLS}


def result_of(value: Any) -> dict[str, Any]:
    """A handler's answer as an MCP ``tools/call`` result (text plus structured data)."""
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}], "isError": False}
    data = _dump(value)
    return {
        "content": [{"type": "text", "text": json.dumps(data, ensure_ascii=False, indent=2)}],
        "structuredContent": data,
        "isError": False,
    }


def error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}
