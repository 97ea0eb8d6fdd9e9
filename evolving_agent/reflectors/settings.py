"""Reflector settings (the ``reflector:`` part of ``schedule.yaml``); the valid names are
the registry's keys (``names.py``).

They live with the reflectors, not the jobs, because ``reflectors`` must not import
``jobs``; ``jobs/settings.py`` re-exports them for the schedule file's model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from evolving_agent.reflectors.names import REFLECTOR_NAMES

if TYPE_CHECKING:
    ReflectorName = str
else:  # the registry's keys, so a wrong name in schedule.yaml lists the valid ones
    ReflectorName = Literal[REFLECTOR_NAMES]

__all__ = ["REFLECTOR_NAMES", "ReflectorName", "ReflectorSettings"]


class ReflectorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: ReflectorName = "rules"
    # 'command': the CLI that reads a prompt on stdin; 'claude' / 'codex' / 'gemini' /
    # 'opencode': the program
    # and any extra flags (default: claude / codex), before the preset's own flags.
    command: str | None = None
    base_url: str = "http://127.0.0.1:11434/v1"  # for 'openai'
    model: str = "llama3.1"
    # The *name* of the variable holding the key.  A key is only ever sent to its own
    # service (OPENAI_API_KEY -> https://api.openai.com) or to the origin named in
    # api_key_for: changing base_url alone never carries a key elsewhere.
    api_key_env: str | None = "OPENAI_API_KEY"
    api_key_for: str | None = None  # e.g. http://gpu-box:8000: send api_key_env's key there
    timeout: float = Field(120.0, gt=0)  # seconds per request (the command: per call)
    retries: int = Field(2, ge=0, le=10)  # 'openai': retries of 429/5xx/connection errors
