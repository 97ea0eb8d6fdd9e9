"""The ``command`` reflector: pipe the prompt to any CLI, read JSON from its stdout.

Works with ``claude -p``, ``codex exec``, ``ollama run MODEL``, ``llm`` — anything that
reads a prompt on stdin and prints an answer.  The answer's JSON object may be bare,
fenced, or the last line of the output.  A non-zero exit, a timeout or a missing
program is an invalid answer (retried once, then the job falls back to rules).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable

from evolving_agent.reflectors.base import PromptReflector, ReflectorError


class CommandReflector(PromptReflector):
    name = "command"

    def __init__(
        self, command: str, *, prompts: Callable[[str], str], timeout: float = 120
    ) -> None:
        super().__init__(prompts)
        self.argv = shlex.split(command)
        if not self.argv:
            raise ReflectorError("the reflector command is empty")
        self.timeout = timeout

    def complete(self, prompt: str) -> str:
        try:
            proc = subprocess.run(
                self.argv,
                input=prompt,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            raise ReflectorError(f"reflector command not found: {self.argv[0]}") from None
        except subprocess.TimeoutExpired:
            raise ReflectorError(f"reflector command timed out after {self.timeout:g}s") from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or [""])[-1]
            raise ReflectorError(f"reflector command exited {proc.returncode}: {last}")
        return proc.stdout
