"""What masking costs on the friction path: ordinary text against text holding a key.

The provider-key rules come from bc-detect-secrets, imported lazily and only for text
with a key-shaped run.  This shows that cost where a user pays it:

1. ``evolving-agent friction TEXT`` as a whole process (interpreter start, imports, the
   append), median over rounds, for a secret-free text and for one holding a Mailchimp
   key (only the detector knows it, so the process imports it).  Target: the secret-free
   process never imports the detector; the difference of the two is its one-time import.
2. ``redact()`` in process, per call: secret-free text, and text with a key once the
   detector is loaded (the warm cost every later call pays).

Run:  python benchmarks/bench_redact.py [--rounds 7] [--calls 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evolving_agent.memory.base.redact import DETECTOR, redact
from evolving_agent.memory.root import init_root

PLAIN = "offered three options when one was asked for; the user stopped me"
KEYED = "deploy with 0123456789abcdef0123456789abcdef-us20 then offered three options"


def friction_process(root: Path, text: str, rounds: int) -> tuple[float, bool]:
    """Median seconds of one ``friction`` process, and whether it imported the detector."""
    samples, imported = [], False
    env = {**os.environ, "EVOLVING_AGENT_ROOT": str(root)}
    for _ in range(rounds):
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "evolving_agent", "friction", text],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        samples.append(time.perf_counter() - t)
        imported = "detect_secrets" in proc.stderr
    return statistics.median(samples), imported


def per_call(text: str, calls: int) -> float:
    t = time.perf_counter()
    for _ in range(calls):
        redact(text)
    return (time.perf_counter() - t) / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = init_root(Path(tmp) / "memory").path
        plain, plain_imported = friction_process(root, PLAIN, args.rounds)
        keyed, keyed_imported = friction_process(root, KEYED, args.rounds)
    print(
        f"friction, secret-free text: {plain * 1000:7.1f} ms (detector imported: {plain_imported})"
    )
    print(
        f"friction, text with a key:  {keyed * 1000:7.1f} ms (detector imported: {keyed_imported})"
    )
    print(
        f"  the detector's import, once a process that sees a key: {(keyed - plain) * 1000:.0f} ms"
    )
    cold = per_call(PLAIN, args.calls)
    t = time.perf_counter()
    DETECTOR.plugins()
    load = time.perf_counter() - t
    warm = per_call(KEYED, args.calls)
    print(f"redact() secret-free text: {cold * 1e6:7.1f} us/call (detector not loaded)")
    print(f"redact() text with a key:  {warm * 1e6:7.1f} us/call (loaded in {load * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
