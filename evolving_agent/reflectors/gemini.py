"""The ``gemini`` reflector: the user's own Gemini CLI, headless, with no tools.

For users who have Gemini CLI and no API key for anything else.  The prompt goes on
stdin to::

    gemini --output-format json --skip-trust --policy SCRATCH/deny-all.toml

with ``GEMINI_CLI_HOME`` set to an empty config home made for the call: its
``.gemini/settings.json`` keeps only the user's login choice (``security.auth``) and
model (``model.name``) — no hooks (the SessionStart hook ``integrations show gemini``
installs would put the boot context into the prompt outside its untrusted fence), no
MCP servers, no context files, no extensions — plus ``general.maxAttempts: 3``, so a
persistent 429 is named as a 429 within seconds rather than after ten growing waits.
The login files (``oauth_creds.json``, ``google_accounts.json``, ``.env``) are copied in.
The policy file denies every tool (Gemini CLI then does not offer them at all), and
``--skip-trust`` trusts the scratch folder the call runs in, which holds no GEMINI.md.

The answer is the JSON object's ``response``; its ``error`` (an API error after the
retries, a missing login) means the backend never answered: :class:`ReflectorUnavailable`
named as Gemini CLI names it, and the job falls back to rules at once.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from evolving_agent.errortext import api_error_text
from evolving_agent.jsonout import json_object
from evolving_agent.process import Completed
from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.command import NO_ANSWER, CliPresetReflector

PRESET_ARGS = ("--output-format", "json", "--skip-trust")
DENY_ALL = '[[rule]]\ntoolName = "*"\ndecision = "deny"\npriority = 999\n'
LOGIN_FILES = ("oauth_creds.json", "google_accounts.json", ".env")
MAX_ATTEMPTS = 3


def gemini_dir(environ: dict[str, str] | None = None) -> Path:
    """The user's ``.gemini`` folder (under ``$GEMINI_CLI_HOME`` when that is set)."""
    env = os.environ if environ is None else environ
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())
    return Path(home) / ".gemini"


def carried_settings(user: Path) -> dict[str, Any]:
    """The login choice and model of the user's settings, and nothing else."""
    try:
        data = json.loads((user / "settings.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        data = {}
    data = data if isinstance(data, dict) else {}
    out: dict[str, Any] = {"general": {"maxAttempts": MAX_ATTEMPTS}}
    security = data.get("security")
    if isinstance(security, dict) and isinstance(security.get("auth"), dict):
        out["security"] = {"auth": security["auth"]}
    model = data.get("model")
    if isinstance(model, dict) and isinstance(model.get("name"), str):
        out["model"] = {"name": model["name"]}
    return out


class GeminiReflector(CliPresetReflector):
    name = "gemini"
    program = "gemini"
    preset_args = PRESET_ARGS

    def call_env(self, scratch: Path) -> dict[str, str]:
        user = gemini_dir()
        home = scratch / "gemini-home"
        config = home / ".gemini"
        config.mkdir(parents=True)
        for name in LOGIN_FILES:
            if (user / name).is_file():
                shutil.copy2(user / name, config / name)
        (config / "settings.json").write_text(json.dumps(carried_settings(user)))
        policy = scratch / "deny-all.toml"
        policy.write_text(DENY_ALL)
        self.argv = [*self.preset_argv(), "--policy", str(policy)]
        # TMPDIR: Gemini CLI leaves an error report file there on every API error.
        # GEMINI_CLI_NO_RELAUNCH: otherwise it loads its whole bundle only to start itself
        # again with a larger heap (a third of a start's CPU); one prompt needs no more.
        return {
            "GEMINI_CLI_HOME": str(home), "TMPDIR": str(scratch), "GEMINI_CLI_NO_RELAUNCH": "true",
        }  # fmt: skip

    def failure_reason(self, done: Completed) -> str:
        """Gemini CLI's API error (``HTTP 400: API key not valid…``) where it printed one."""
        for text in (done.stderr, done.stdout):
            at = text.find('{"error"')
            if at >= 0 and not done.timed_out and not done.launch_error:
                line = text[at:].splitlines()[0]
                return f"gemini: {api_error_text(line)} (exit {done.returncode})"
        return super().failure_reason(done)

    def answer_of(self, stdout: str) -> str:
        return answer_of(stdout)


def answer_of(stdout: str) -> str:
    """The model's text from Gemini CLI's JSON output (or why there is none)."""
    data = json_object(stdout)
    if data is None:
        raise ReflectorUnavailable(f"gemini printed no JSON result {NO_ANSWER}")
    error = data.get("error")
    if isinstance(error, dict) and error:
        raise ReflectorUnavailable(f"gemini: {api_error_text(str(error.get('message') or error))}")
    if not isinstance(data.get("response"), str):
        raise ReflectorUnavailable(f"gemini printed no response {NO_ANSWER}")
    return str(data["response"])
