"""Soak: three devices of one self syncing through one remote, with kills, until they agree.

Each cycle, every device appends friction (a real ``friction`` process, unique texts),
two devices set the same Live Bus key (a forced concurrent edit), the today writer
runs its nightly job, and every device syncs - each process of the cycle SIGKILLed at a
random step with probability ``--kill`` (``EVOLVING_AGENT_SYNC_KILL_AT``: before or
after the fetch, after the snapshot or the plan, mid-apply, around the push; a killed
``friction`` or nightly process is killed outright).  At the end every device syncs
until nothing changes, then the invariants are checked:

- every event whose process exited 0 is present exactly once on every device (one
  killed before its append may be absent; one killed after it is present once);
- Canon did not change (no review was approved, so no Canon change may appear);
- ``verify`` finds no problem on any device.

Run:  python benchmarks/soak_sync.py [--cycles 50] [--kill 0.2] [--seed 1]
(the slow suite runs it with 3 cycles: tests/memory/test_sync.py).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.root import init_root
from evolving_agent.memory.sync import KILL_ENV, add_remote, clone, sync
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot

KILL_POINTS = (
    "before-fetch", "after-fetch", "snapshot", "planned", "journaled", "data-written",
    "file-written", "before-push", "after-push",
)  # fmt: skip


@dataclass
class Soak:
    devices: list[MemoryRoot]
    rng: random.Random
    kill: float
    sent: Counter[str] = field(default_factory=Counter)  # texts whose process exited 0
    maybe: set[str] = field(default_factory=set)  # texts whose process was killed
    kills: int = 0
    syncs: int = 0

    def cli(self, root: MemoryRoot, *args: str, kill_at: str | None = None) -> int:
        if os.environ.get("SOAK_TRACE"):
            print(
                f"{root.path.name}: {' '.join(args)} {kill_at or ''}", file=sys.stderr, flush=True
            )
        env = {**os.environ, "EVOLVING_AGENT_ROOT": str(root.path)}
        env.pop(KILL_ENV, None)
        if kill_at:
            env[KILL_ENV] = kill_at
        done = subprocess.run(
            [sys.executable, "-m", "evolving_agent", *args],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if done.returncode == -signal.SIGKILL:
            self.kills += 1
        elif done.returncode not in (0, 3):  # 3: not the today writer (a refused nightly)
            raise AssertionError(f"{args} on {root.path}: exit {done.returncode}: {done.stderr}")
        return done.returncode

    def cycle(self, n: int) -> None:
        for i, root in enumerate(self.devices):
            text = f"soak cycle {n} device {i}: offered options unasked"
            if self.rng.random() < self.kill:  # a friction process killed mid-flight
                proc = subprocess.Popen(
                    [sys.executable, "-m", "evolving_agent", "--root", str(root.path),
                     "friction", text],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
                time.sleep(self.rng.random() * 0.3)
                proc.send_signal(signal.SIGKILL)
                if proc.wait() == 0:
                    self.sent[text] += 1
                else:
                    self.kills += 1
                    self.maybe.add(text)
            elif self.cli(root, "friction", text) == 0:
                self.sent[text] += 1
        for root in self.rng.sample(self.devices, 2):  # the same key on two devices
            self.cli(root, "live", "set", "thread", f"cycle {n} on {root.path.name}")
        for root in self.devices:
            self.cli(root, "run", "nightly")  # only the today writer's runs; others exit 3
        for root in self.rng.sample(self.devices, len(self.devices)):
            point = self.rng.choice(KILL_POINTS) if self.rng.random() < self.kill else None
            self.cli(root, "sync", kill_at=point)
            self.syncs += 1

    def settle(self) -> None:
        """Sync round-robin, no kills, until two rounds in a row change nothing."""
        quiet = 0
        while quiet < 2:
            before = [EvidenceLog(r).all_days() for r in self.devices]
            for root in self.devices:
                self.cli(root, "sync")
                self.syncs += 1
            after = [EvidenceLog(r).all_days() for r in self.devices]
            counts = [_friction(r) for r in self.devices]
            quiet = quiet + 1 if before == after and len(set(map(str, counts))) == 1 else 0

    def check(self, canon_before: str | None) -> list[str]:
        problems = []
        for root in self.devices:
            held = _friction(root)
            for text, n in self.sent.items():
                if held[text] != n:
                    problems.append(f"{root.path.name}: {text!r} held {held[text]}x, sent {n}x")
            for text in self.maybe:
                if held[text] > 1:
                    problems.append(f"{root.path.name}: killed {text!r} held {held[text]}x")
            if gitrepo.head_commit(root) != canon_before:
                problems.append(f"{root.path.name}: Canon changed without a review")
            problems += [f"{root.path.name}: {p}" for p in verify_root(root).problems]
        return problems


def _friction(root: MemoryRoot) -> Counter[str]:
    # A root's days read every device's chain (memory/evidence/devices.py): each record once.
    return Counter(r.text for r in EvidenceLog(root).iter_all() if r.kind == "friction")


def soak(base: Path, *, cycles: int, kill: float, seed: int) -> tuple[Soak, list[str]]:
    remote = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    laptop = init_root(base / "laptop")
    add_remote(laptop, "origin", str(remote))
    sync(laptop)
    desktop, _ = clone(str(remote), base / "desktop", name="desktop")
    phone, _ = clone(str(remote), base / "phone", name="phone")
    run = Soak([laptop, desktop, phone], random.Random(seed), kill)
    canon_before = gitrepo.head_commit(laptop)
    for n in range(cycles):
        run.cycle(n)
    run.settle()
    return run, run.check(canon_before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--kill", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ea-soak-") as tmp:
        os.environ.setdefault("GIT_AUTHOR_NAME", "Soak")
        os.environ.setdefault("GIT_AUTHOR_EMAIL", "soak@example.invalid")
        os.environ.setdefault("GIT_COMMITTER_NAME", "Soak")
        os.environ.setdefault("GIT_COMMITTER_EMAIL", "soak@example.invalid")
        start = time.monotonic()
        run, problems = soak(Path(tmp), cycles=args.cycles, kill=args.kill, seed=args.seed)
        took = time.monotonic() - start
    print(
        f"{args.cycles} cycles, 3 devices: {sum(run.sent.values())} events sent, "
        f"{len(run.maybe)} killed mid-append, {run.kills} processes killed, {run.syncs} "
        f"syncs, {took:.0f} s; problems: {len(problems)}"
    )
    for problem in problems[:20]:
        print("  " + problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
