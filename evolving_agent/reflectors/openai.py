"""The ``openai`` reflector: any OpenAI-compatible chat-completions endpoint.

Ollama, vLLM, llama.cpp server and hosted APIs all speak ``POST {base_url}/chat/completions``.
Settings (base URL, model, the *name* of the environment variable holding the key)
come from the root's ``schedule.yaml`` ``reflector:`` section.  Plain ``urllib`` keeps
the dependency list short; an HTTP error, a malformed response body or a malformed
answer is an invalid answer (retried once, then the job falls back to rules).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable

from evolving_agent.reflectors.base import PromptReflector, ReflectorError
from evolving_agent.reflectors.settings import ReflectorSettings

SYSTEM = "You are the reflector of a long-lived assistant's memory. Answer with one JSON object."


class OpenAIReflector(PromptReflector):
    name = "openai"

    def __init__(self, settings: ReflectorSettings, *, prompts: Callable[[str], str]) -> None:
        super().__init__(prompts)
        self.settings = settings

    def complete(self, prompt: str) -> str:
        s = self.settings
        body = {
            "model": s.model,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt},
            ],
            "temperature": 0,
        }
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(s.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = s.base_url.rstrip("/") + "/chat/completions"
        req = urllib.request.Request(
            url, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=s.timeout) as resp:
                payload = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise ReflectorError(f"{url} answered HTTP {exc.code}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise ReflectorError(f"cannot reach {url}: {exc}") from None
        except ValueError:
            raise ReflectorError(f"{url} did not answer JSON") from None
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ReflectorError(f"{url} answered without choices[0].message.content") from None
        if not isinstance(content, str):
            raise ReflectorError(f"{url} answered a non-text message")
        return content
