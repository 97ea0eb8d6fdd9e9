"""The ``openai`` reflector: any OpenAI-compatible chat-completions endpoint.

Ollama, vLLM, llama.cpp server and hosted APIs all speak ``POST {base_url}/chat/completions``.
Settings come from the root's ``schedule.yaml`` ``reflector:`` section.  The maintained
``openai`` client does the transport: a timeout per request, retries of 408/409/429/5xx
and connection errors with backoff that honours ``Retry-After`` (up to two minutes).

- **JSON mode** (``response_format={"type": "json_object"}``) is asked for; a server
  that refuses it (HTTP 400/422) is asked once more without it, and this reflector
  stops asking.
- **Transport failures** (unreachable, timeout, an HTTP error after the retries, a body
  that is not a chat completion) raise :class:`ReflectorUnavailable`: the job falls
  back to rules at once and names the cause; the model is never told "your answer was
  refused" for a failure that was not its answer.
- **The key goes only where it was configured to go**: :func:`key_for`.  The client is
  never left to read ``OPENAI_API_KEY`` (or an organisation / project id) from the
  environment by itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from evolving_agent.errors import MissingExtra
from evolving_agent.extras import require
from evolving_agent.memory.base.redact import redact
from evolving_agent.reflectors.base import Reflector, ReflectorError, ReflectorUnavailable
from evolving_agent.reflectors.prompt import PromptReflector
from evolving_agent.reflectors.settings import ReflectorSettings

if TYPE_CHECKING:  # the client costs ~0.3 s to import; only jobs that use it pay
    import openai


def _openai() -> Any:
    """The openai module; without the ``[openai]`` extra the reflector is unavailable."""
    try:
        return require("openai", "the openai reflector")
    except MissingExtra as exc:
        raise ReflectorUnavailable(str(exc)) from None


SYSTEM = "You are the reflector of a long-lived assistant's memory. Answer with one JSON object."

# Well-known key variables and the one origin each belongs to.
KEY_HOMES: dict[str, str] = {
    "OPENAI_API_KEY": "https://api.openai.com",
    "OPENROUTER_API_KEY": "https://openrouter.ai",
    "GROQ_API_KEY": "https://api.groq.com",
    "MISTRAL_API_KEY": "https://api.mistral.ai",
    "DEEPSEEK_API_KEY": "https://api.deepseek.com",
    "TOGETHER_API_KEY": "https://api.together.xyz",
}
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower-cased, default ports dropped."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if ":" in host:
        host = f"[{host}]"
    shown = f":{port}" if port is not None and port != _DEFAULT_PORTS.get(scheme) else ""
    return f"{scheme}://{host}{shown}"


def key_for(
    settings: ReflectorSettings, environ: Mapping[str, str] | None = None
) -> tuple[str | None, str | None]:
    """The key to send to ``settings.base_url``, and why one was withheld (if it was).

    The key named by ``api_key_env`` is sent only when ``base_url``'s origin is the
    key's own service (:data:`KEY_HOMES`) or the origin ``api_key_for`` names.  So the
    documented ``OPENAI_API_KEY`` goes to api.openai.com and nowhere else, and a local
    server gets a key only when the file pairs that key with that server explicitly.
    """
    env = os.environ if environ is None else environ
    name = settings.api_key_env
    value = env.get(name) if name else None
    if not name or not value:
        return None, None
    target = origin(settings.base_url)
    allowed = {KEY_HOMES[name]} if name in KEY_HOMES else set()
    if settings.api_key_for:
        allowed.add(origin(settings.api_key_for))
    if target in allowed:
        return value, None
    where = " or ".join(sorted(allowed)) if allowed else "no origin (set api_key_for)"
    return None, f"{name} was not sent to {target}: it may only go to {where}"


OFFICIAL_BASE_URL = "https://api.openai.com/v1"
OFFICIAL_MODEL = "gpt-4o-mini"


def resolve_endpoint(
    settings: ReflectorSettings, environ: Mapping[str, str] | None = None
) -> ReflectorSettings:
    """``settings`` with the endpoint a user means when the file names none.

    A ``base_url`` written in ``schedule.yaml`` always wins; else ``$OPENAI_BASE_URL`` (the
    openai client's own variable); else, when ``OPENAI_API_KEY`` is the key variable and
    set, OpenAI's own API (and ``gpt-4o-mini`` unless a model is written); else the local
    Ollama address.  A newcomer with only ``OPENAI_API_KEY`` set was sent to Ollama.
    """
    env = os.environ if environ is None else environ
    if "base_url" in settings.model_fields_set:
        return settings
    update: dict[str, str] = {}
    if env.get("OPENAI_BASE_URL"):
        update["base_url"] = env["OPENAI_BASE_URL"]
    elif settings.api_key_env == "OPENAI_API_KEY" and env.get("OPENAI_API_KEY"):
        update["base_url"] = OFFICIAL_BASE_URL
        if "model" not in settings.model_fields_set:
            update["model"] = OFFICIAL_MODEL
    return settings.model_copy(update=update) if update else settings


class OpenAIReflector(PromptReflector):
    name = "openai"

    @classmethod
    def from_settings(
        cls, settings: ReflectorSettings, *, command: str | None, prompts: Callable[[str], str]
    ) -> Reflector:
        return cls(settings, prompts=prompts)

    def __init__(self, settings: ReflectorSettings, *, prompts: Callable[[str], str]) -> None:
        super().__init__(prompts)
        self.settings = resolve_endpoint(settings)
        self.json_mode = True
        self._client: openai.OpenAI | None = None
        self._key_sent = False
        self._withheld: str | None = None

    def client(self) -> openai.OpenAI:
        if self._client is None:
            openai = _openai()

            key, self._withheld = key_for(self.settings)
            self._key_sent = key is not None
            headers: dict[str, Any] = {
                # Never let the client fill these in from the environment.
                "OpenAI-Organization": openai.Omit(),
                "OpenAI-Project": openai.Omit(),
            }
            try:
                self._client = openai.OpenAI(
                    # Always explicit: with None the client reads OPENAI_API_KEY itself.
                    # Without a key the Authorization header is omitted per request.
                    api_key=key or "no-key",
                    admin_api_key="",
                    organization="",
                    project="",
                    base_url=self.settings.base_url,
                    timeout=self.settings.timeout,
                    max_retries=self.settings.retries,
                    default_headers=headers,
                )
            except openai.OpenAIError as exc:
                raise ReflectorUnavailable(f"cannot set up the openai client: {exc}") from None
        return self._client

    def complete(self, prompt: str) -> str:
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt},
        ]
        return self._chat(messages, json_answer=True)

    def answer_probe(self, *, context: str, prompt: str) -> str:
        """The boot context as the system prompt and the user's message, as a session
        would send them; a plain-text answer (no JSON mode)."""
        messages = [
            {"role": "system", "content": redact(context)},
            {"role": "user", "content": redact(prompt)},
        ]
        return self._chat(messages, json_answer=False)

    def _chat(self, messages: list[dict[str, str]], *, json_answer: bool) -> str:
        openai = _openai()

        try:
            try:
                response = self._ask(messages, json_answer)
            except openai.APIStatusError as exc:
                if not (json_answer and self.json_mode) or exc.status_code not in (400, 422):
                    raise
                # The server does not take response_format: ask once more without it.
                self.json_mode = False
                response = self._ask(messages, json_answer)
        except openai.APITimeoutError:
            raise ReflectorUnavailable(
                f"{self.settings.base_url} timed out after {self.settings.timeout:g}s"
            ) from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise ReflectorUnavailable(f"cannot reach {self.settings.base_url}: {cause}") from None
        except openai.APIStatusError as exc:
            raise ReflectorUnavailable(self._status_message(exc)) from None
        except (openai.OpenAIError, ValueError) as exc:  # ValueError: a body that is not JSON
            raise ReflectorUnavailable(
                f"{self.settings.base_url} answered something that is not a chat completion "
                f"({type(exc).__name__})"
            ) from None
        return self._content(response)

    def _ask(self, messages: list[dict[str, str]], json_answer: bool = True) -> Any:
        openai = _openai()

        client = self.client()
        extra: dict[str, Any] = {}
        if json_answer and self.json_mode:
            extra["response_format"] = {"type": "json_object"}
        if not self._key_sent:  # no key may go there: send no Authorization at all
            extra["extra_headers"] = {"Authorization": openai.Omit()}
        return client.chat.completions.create(
            model=self.settings.model,
            messages=messages,  # type: ignore[arg-type]  # plain dicts are the wire format
            temperature=0,
            **extra,
        )

    def _status_message(self, exc: openai.APIStatusError) -> str:
        detail = ""
        body = exc.body
        if isinstance(body, dict):
            err = body.get("error", body)
            msg = err.get("message") if isinstance(err, dict) else err
            if isinstance(msg, str):
                detail = ": " + " ".join(msg.split())[:200]
        withheld = f" ({self._withheld})" if self._withheld else ""
        return f"HTTP {exc.status_code} from {self.settings.base_url}{detail}{withheld}"

    def _content(self, response: Any) -> str:
        url = self.settings.base_url
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            raise ReflectorUnavailable(
                f"{url} answered something that is not a chat completion"
            ) from None
        if not isinstance(content, str):
            raise ReflectorError(f"invalid reflector output: {url} answered a non-text message")
        return content
