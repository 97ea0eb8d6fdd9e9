"""Results that carry their messages, so every front end warns the same way.

A core operation that has something to say besides its answer (an id nobody knows, a
file it skipped) returns a :class:`Result`: the answer in ``value`` and what to tell
the person in ``messages``.  The CLI prints each message as ``warning: …`` on stderr;
the MCP server returns them in the tool's answer; a library caller reads them.  No
front end decides on its own what is worth a warning.
"""

from __future__ import annotations

from dataclasses import field
from typing import Generic, Literal, TypeVar

from evolving_agent.records import record

T = TypeVar("T")

Level = Literal["info", "warning"]


@record(frozen=True)
class Message:
    """One thing to tell the person, with how loudly."""

    text: str
    level: Level = "warning"


@record
class Result(Generic[T]):
    """An operation's answer and the messages that go with it."""

    value: T
    messages: list[Message] = field(default_factory=list)

    def warn(self, text: str) -> None:
        self.messages.append(Message(text, "warning"))

    @property
    def warnings(self) -> list[str]:
        return [m.text for m in self.messages if m.level == "warning"]
