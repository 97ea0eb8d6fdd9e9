"""``probe run``: ask one model every probe, with exactly the context boot gives.

The probes come from the Canon the writer last committed (as boot serves it), each
entry reference resolved against that Canon's identity.  The context is
:func:`~evolving_agent.memory.boot.boot.build_boot`'s Markdown, byte for byte what a session
starts with; its sha256 goes into every record so two answers can be told apart by
what the model saw.

The backend is any :class:`~evolving_agent.reflectors.base.ProbeAnswerer`.  A command
backend runs contained as it does for the jobs (own process group, a scratch
directory, Canon / schedule / prompts checked around the call); around every answer
this module also checks those paths *and Today*, whatever the backend: if anything
changed it is restored, the run stops with exit 5, and the answer is not recorded.

Each answer becomes one ``probe`` Evidence record (masked, at most
:data:`MAX_ANSWER_CHARS`), appended by the ``monthly`` actor: probes belong to the
slow clock's review machinery, and the records are what a probe card cites.  Nothing
else is written: not Canon, not Today, not the Live Bus.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any

from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.base.redact import redact
from evolving_agent.memory.base.yamlio import parse_yaml, validate
from evolving_agent.memory.boot.boot import build_boot
from evolving_agent.memory.canon.canon import IDENTITY_FILE, Identity
from evolving_agent.memory.canon.canon_snapshot import load_canon
from evolving_agent.memory.canon.policy import Actor
from evolving_agent.memory.canon.probe_file import check_probes_text, resolve_entry
from evolving_agent.memory.evidence.evidence import now as local_now
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes.models import (
    MAX_ANSWER_CHARS,
    PROBES_FILE,
    ProbeAnswerData,
    ProbeRunResult,
    ProbesFile,
)
from evolving_agent.reflectors.base import ProbeAnswerer, ReflectorUnavailable
from evolving_agent.reflectors.command import (
    ReflectorTampered,
    changed_paths,
    restore,
    snapshot,
)

ACTOR: Actor = "monthly"  # the queue's writer; its records are what cards cite
DEFAULT_REPEATS = 3  # one misread answer must not decide a verdict
MAX_REPEATS = 20


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class BadModelName(UsageError):
    def __init__(self, model: str) -> None:
        self.model = model
        super().__init__(f"--model {model!r} must be one short line of printable text")


class NoProbes(InvalidInput):
    """The Canon boot serves holds no ``probes.yaml``."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            "no probes yet: write some with 'evolving-agent canon edit probes.yaml' "
            "(see docs/probes.md)",
            file=path,
        )


def check_model_name(model: str) -> str:
    """A model name is a label in records and cards: one short printable line."""
    if not model.strip() or len(model) > 100 or any(not c.isprintable() for c in model):
        raise BadModelName(model)
    return model.strip()


def committed_probes(root: MemoryRoot) -> tuple[ProbesFile, dict[str, Any], str | None]:
    """probes.yaml and the identity as boot serves them (the last writer commit's Canon),
    and that commit."""
    canon = load_canon(root)
    path = root.canon / PROBES_FILE
    data = canon.files.get(PROBES_FILE)
    if data is None:
        raise NoProbes(path)
    try:
        probes = check_probes_text(parse_yaml(data.decode("utf-8"), file=path), None, file=path)
        ident_path = root.canon / IDENTITY_FILE
        raw = canon.files.get(IDENTITY_FILE, b"")
        identity = validate(
            Identity, parse_yaml(raw.decode("utf-8"), file=ident_path), file=ident_path
        )
    except UnicodeDecodeError:
        raise InvalidInput("not UTF-8 text", file=path) from None
    return probes, identity.model_dump(), canon.commit


def bound(answer: str) -> tuple[str, bool]:
    """The answer masked and cut to :data:`MAX_ANSWER_CHARS` (and whether it was cut)."""
    text = redact(answer).strip()
    if len(text) <= MAX_ANSWER_CHARS:
        return text, False
    return text[:MAX_ANSWER_CHARS].rstrip() + " […]", True


def run_probes(
    root: MemoryRoot,
    *,
    model: str,
    backend: ProbeAnswerer,
    repeats: int = DEFAULT_REPEATS,
    now: datetime | None = None,
) -> ProbeRunResult:
    """Ask ``backend`` (labelled ``model``) every active probe ``repeats`` times; record
    each answer (``probe diff`` reads a probe's adherence as the share honoured)."""
    require_root(root)
    model = check_model_name(model)
    if not 1 <= repeats <= MAX_REPEATS:
        raise UsageError(f"--repeats must be 1 to {MAX_REPEATS} (got {repeats})")
    probes, identity, commit = committed_probes(root)
    context = build_boot(root).markdown()
    context_sha = sha256(context)
    when = now or local_now()
    run = f"probe-{when.strftime('%Y%m%dT%H%M%S')}-{sha256(model + when.isoformat())[:8]}"
    writer = Writer(root, ACTOR)
    answered: list[str] = []
    failed: dict[str, str] = {}
    skipped: dict[str, str] = {p.key: "retired" for p in probes.probes if p.retired}
    record_ids: list[str] = []
    guarded = [root.today]  # beside Canon, the schedule and the prompts
    for probe, repeat in ((p, r) for p in probes.active() for r in range(1, repeats + 1)):
        try:
            entry_text = resolve_entry(identity, probe.entry)
        except ValueError as exc:
            skipped[probe.key] = f"{exc} (edit canon/probes.yaml)"
            continue
        before = snapshot(root, guarded)
        error: str | None = None
        try:
            raw = backend.answer_probe(context=context, prompt=probe.prompt)
        except ReflectorUnavailable as exc:
            raw, error = "", str(exc)
        after = snapshot(root, guarded)
        changed = changed_paths(before, after)
        if changed:
            restore(root, before, after)
            raise ReflectorTampered(backend.name or "probe", changed)
        answer, truncated = bound(raw)
        if error is None and not answer:
            error = "the model answered nothing"
        data = ProbeAnswerData(
            run=run,
            model=model,
            reflector=backend.name,
            probe=probe.key,
            entry=probe.entry,
            entry_text=entry_text,
            canon_commit=commit,
            context_sha256=context_sha,
            prompt_sha256=sha256(probe.prompt),
            answer=answer,
            truncated=truncated,
            error=redact(error) if error else None,
            repeat=repeat,
        )
        verb = "could not answer" if error else "answered"
        of = f" ({repeat} of {repeats})" if repeats > 1 else ""
        rec = writer.append(
            "probe", f"{model} {verb} probe {probe.key}{of}", data=data.model_dump(mode="json")
        )
        record_ids.append(rec.id)
        if error:
            failed.setdefault(probe.key, error)
        elif probe.key not in answered:
            answered.append(probe.key)
    return ProbeRunResult(
        run=run,
        model=model,
        reflector=backend.name,
        canon_commit=commit,
        context_sha256=context_sha,
        answered=answered,
        repeats=repeats,
        failed=failed,
        skipped=skipped,
        record_ids=record_ids,
    )
