"""Reflector settings (the ``reflector:`` part of ``schedule.yaml``) and the valid names.

They live with the reflectors, not the jobs, because ``reflectors`` must not import
``jobs``; ``jobs/settings.py`` re-exports them for the schedule file's model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ReflectorName = Literal["rules", "command", "openai"]
REFLECTOR_NAMES: tuple[str, ...] = ("rules", "command", "openai")


class ReflectorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: ReflectorName = "rules"
    command: str | None = None  # for 'command': the CLI that reads a prompt on stdin
    base_url: str = "http://127.0.0.1:11434/v1"  # for 'openai'
    model: str = "llama3.1"
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = Field(120.0, gt=0)
