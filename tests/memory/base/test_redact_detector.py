"""The maintained detector behind memory/base/redact.py, and the contract with our own tables.

The detector (bc-detect-secrets' regex plugins) is the source of provider-key rules.  Our
own rows stay only where it falls short, and these tests keep both claims true: every row
of ``_GAPS`` is a shape the detector misses (the day it learns one, its test here fails and
the row goes), every row of ``_FALLBACK`` is one it finds (so the write path may leave it to
the detector).  The hot paths pay for it only when a key could be there: a friction of
ordinary words and boot's fast path never import it (checked in real processes).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evolving_agent.memory.base.redact import (
    _FALLBACK,
    _GAPS,
    DETECTOR,
    _may_hold_key,
    redact,
    redact_fast,
)
from tests.helpers import new_root

AWS = "AKIAIOSFODNN7EXAMPLE"
AL = "aB3xK9mQ2zR7tY5wP1nL8vC4"  # a key-looking alphabet run, cut to each provider's length


def al(n: int) -> str:
    return (AL * 10)[:n]


# (kind, realistic sample, the part that must not survive): one per _GAPS row.
GAP_SAMPLES = [
    (
        "private-key",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF" + al(60) + "\n=abcd\n"
        "-----END PGP PRIVATE KEY BLOCK-----",
        "lQOYBF",
    ),
    (
        "putty-key",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n"
        "AAAAIBQ8xPRIVATEexample\nPrivate-MAC: 0a1b2c3d4e5f",
        "AAAAIBQ8xPRIVATEexample",
    ),
    ("anthropic-key", "sk-ant-api03-" + al(93) + "AA", al(60)),
    ("openai-key", "sk-proj-" + al(20) + "T3BlbkFJ" + al(20), al(20)),
    ("stripe-key", "sk_test_" + al(24), al(24)),
    ("github-token", "github_pat_" + al(82), al(40)),
    ("slack-token", "xapp-1-A0123456789-1234567890123-" + al(40), al(40)),
    ("slack-webhook", "https://hooks.slack.com/workflows/T0ABCDEF1/A0AB/123/" + al(24), al(24)),
    ("google-key", "AIza" + al(35), al(30)),
    ("huggingface-token", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "abcdefghijklmnopqrst"),
    ("gitlab-token", "glpat-" + al(20), al(20)),
    (
        "discord-webhook",
        "https://discord.com/api/webhooks/123456789012345678/" + al(68),
        al(40),
    ),
    ("stripe-webhook-secret", "whsec_" + al(32), al(24)),
    ("google-oauth-token", "ya29.a0AfH6SMBx3kZ9" + al(40), al(30)),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmcCJGE0ZjY5ZDdkLWFiY2QtNDk4Yi04YjQ3LTIzNDU2", "AgEIcHlwaS5"),
    ("mailgun-key", "key-0123456789abcdef0123456789abcdef", "0123456789abcdef0123"),
    ("telegram-token", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", "AAHdqTcvCH1vGWJ"),
    ("shopify-token", "shpat_0123456789abcdef0123456789abcdef", "0123456789abcdef0123"),
    ("square-token", "sq0atp-" + al(22), al(22)),
    ("databricks-token", "dapi0123456789abcdef0123456789abcdef", "0123456789abcdef0123"),
    ("digitalocean-token", "dop_v1_" + "0123456789abcdef" * 4, "0123456789abcdef" * 2),
    ("linear-key", "lin_api_" + al(40), al(40)),
    ("doppler-token", "dp.pt." + al(43), al(43)),
    (
        "age-secret-key",
        "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58],
        "QPZRY9X8GF2T",
    ),
    (
        "azure-sas",
        "https://a.blob.core.windows.net/c?sv=2022&sig=AbCdEfGhIjKlMnOpQrSt0123",
        "AbCdEf",
    ),
]

# (kind, realistic sample, the part that must not survive): one per _FALLBACK row, in
# the shape the provider issues.
FALLBACK_SAMPLES = [
    (
        "private-key",
        '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n'
        '-----END PRIVATE KEY-----\\n"}',
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
    (
        "json-web-token",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    ("stripe-access-key", "sk_live_" + al(24), al(24)),
    ("github-token", "ghp_" + al(36), al(36)),
    ("slack-token", "xoxb-1234567890-1234567890123-" + al(24), al(24)),
    ("aws-access-key", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("slack-webhook", "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/" + al(24), al(24)),
    ("sendgrid-api-key", "SG." + al(22) + "." + al(43), al(43)),
    ("twilio-api-key", "SK" + "0123456789abcdef" * 2, "0123456789abcdef" * 2),
    ("npm-tokens", "npm_" + al(36), al(36)),
    ("square-oauth-secret", "sq0csp-" + al(43), al(43)),
]

# What the detector alone brings: keys no table of ours knows.
DETECTOR_ONLY = [
    ("artifactory", "AKCp8" + al(68)),
    ("mailchimp", "0123456789abcdef0123456789abcdef-us20"),
    ("azure-storage", "the azure storage key " + al(86) + "=="),
]

# Evidence lines and ids the detector must never run on (the prefilter says no) and never
# change: hashes, git shas, uuids, Evidence ids, timestamps.
EVIDENCE_LIKE = [
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit b325f65fc22e6254308750daf1bb8870d88a8ae2 init: memory root created",
    "run 3f2b8c1e-7d4a-4b6e-9a1f-2c3d4e5f6a7b finished at 2026-12-01T11:34:41.435492Z",
    "ev-024cc0d85c09 supports h-8ae40df9",
    "the build broke again after rebase",
    "max_tokens=4096 and temperature=0.2",
]


@pytest.fixture(scope="module")
def detector() -> None:
    if not DETECTOR.available():  # a declared core dependency: its absence is a broken install
        pytest.fail("bc-detect-secrets is not importable (pip install -e .)")


def test_every_table_row_has_a_sample() -> None:
    assert sorted(k for k, _, _ in GAP_SAMPLES) == sorted(k for k, _, _ in _GAPS)
    assert sorted(k for k, _, _ in FALLBACK_SAMPLES) == sorted(k for k, _, _ in _FALLBACK)


@pytest.mark.parametrize(("kind", "text", "secret"), GAP_SAMPLES, ids=[s[0] for s in GAP_SAMPLES])
def test_each_gap_row_is_a_shape_the_detector_misses(
    detector: None, kind: str, text: str, secret: str
) -> None:
    assert secret in DETECTOR.mask(text), f"the detector finds {kind} now: drop its _GAPS row"
    masked = redact(text)
    assert secret not in masked and f"[REDACTED:{kind}]" in masked


@pytest.mark.parametrize(
    ("kind", "text", "secret"), FALLBACK_SAMPLES, ids=[s[0] for s in FALLBACK_SAMPLES]
)
def test_each_fallback_row_is_a_shape_the_detector_finds(
    detector: None, kind: str, text: str, secret: str
) -> None:
    assert _may_hold_key(text)  # the prefilter lets it through to the detector
    assert secret not in DETECTOR.mask(text)
    # Both paths, with the detector and boot's without it, mask it.
    assert f"[REDACTED:{kind}]" in redact_fast(text)
    for masked in (redact(text), redact_fast(text)):
        assert secret not in masked and "[REDACTED:" in masked


@pytest.mark.parametrize(("name", "text"), DETECTOR_ONLY, ids=[s[0] for s in DETECTOR_ONLY])
def test_the_detector_masks_keys_no_table_of_ours_knows(
    detector: None, name: str, text: str
) -> None:
    assert redact_fast(text) == text  # none of our rows
    assert "[REDACTED:" in redact(text) and text not in redact(text)


@pytest.mark.parametrize("text", EVIDENCE_LIKE)
def test_hashes_ids_and_prose_skip_the_detector_and_stay(text: str) -> None:
    assert not _may_hold_key(text)
    assert redact(text) == text


def test_a_plugin_never_reaches_the_network(
    detector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Guards the detector's verify(): it would send a found key to its provider.
    import socket

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("the redactor opened a connection")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    text = " ".join([t for _, t, _ in FALLBACK_SAMPLES] + [t for _, t in DETECTOR_ONLY])
    assert "[REDACTED:stripe-access-key]" in redact(text)


def _imports(args: list[str], root: Path, env: dict[str, str] | None = None) -> tuple[str, str]:
    """(stdout, the modules imported) of ``python -X importtime -m evolving_agent ARGS``."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evolving_agent", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "EVOLVING_AGENT_ROOT": str(root), "USER": "alice", **(env or {})},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    return proc.stdout, "\n".join(sorted(modules))


@pytest.mark.slow
def test_ordinary_friction_never_imports_the_detector_and_a_key_does(
    detector: None, tmp_path: Path
) -> None:
    root = new_root(tmp_path)
    _, modules = _imports(["friction", "the build broke again after the rebase"], root)
    assert "detect_secrets" not in modules
    _, modules = _imports(["friction", "deploy with " + DETECTOR_ONLY[1][1]], root)
    assert "detect_secrets" in modules
    day = next((root / "evidence").glob("*.jsonl")).read_text()
    assert DETECTOR_ONLY[1][1] not in day and "[REDACTED:mailchimp-access-key]" in day


@pytest.mark.slow
def test_boot_fast_path_never_imports_the_detector(tmp_path: Path) -> None:
    # A key in the human's own Canon note: boot masks it with our fallback table alone.
    root = new_root(tmp_path)
    editor = tmp_path / "ed.sh"
    editor.write_text(f'#!/bin/sh\necho "aws {AWS}" >> "$1"\n')
    editor.chmod(0o755)
    _imports(["canon", "edit", "notes.md", "-m", "a note"], root, {"EDITOR": str(editor)})
    _imports(["boot"], root)  # the first boot after a Canon change is the full one
    out, modules = _imports(["boot"], root)
    assert "click" not in modules  # the fast path served it
    assert "detect_secrets" not in modules
    assert AWS not in out and "[REDACTED:aws-access-key]" in out


def test_every_kind_in_one_text_is_masked_together(detector: None) -> None:
    # One text holding a key of every kind we know: no pass undoes or hides another.
    samples = GAP_SAMPLES + FALLBACK_SAMPLES + [(k, t, t) for k, t in DETECTOR_ONLY]
    masked = redact("\n".join(t for _, t, _ in samples))
    for _, _, secret in samples:
        assert secret not in masked
