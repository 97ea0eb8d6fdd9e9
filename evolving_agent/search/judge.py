"""The judge: scores a commit on a clean export, from outside every workspace.

The commit is exported with ``git archive`` (committed, non-ignored files only) into
a fresh temporary directory outside the run directory.  The score command runs with
its working directory set to where the run was started (so ``python score.py``
keeps meaning the trusted scorer, not a copy an agent edited), gets the export's
path as ``$EA_CANDIDATE`` (and in place of ``{candidate}`` in the command), runs in
its own process group and is killed as a group on timeout.  Its last stdout line must
be a number; the lines before it are feedback.  A crash (non-zero exit), timeout or
unparsable output is a failed candidate, never an exception.

With ``repeats`` > 1 the command runs that many times and the median counts.
"""

from __future__ import annotations

import shlex
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from evolving_agent.process import run_process
from evolving_agent.search.workspace import export_commit

FEEDBACK_CHARS = 2000


@dataclass(frozen=True)
class Verdict:
    score: float | None  # None: failed
    scores: list[float] = field(default_factory=list)
    feedback: str = ""
    export_s: float = 0.0
    score_s: float = 0.0

    @property
    def failed(self) -> bool:
        return self.score is None


@dataclass(frozen=True)
class Judge:
    score_cmd: str
    workdir: Path
    timeout: float
    repeats: int = 1

    def judge(self, repo_dir: Path, commit: str) -> Verdict:
        """Export ``commit`` from ``repo_dir`` and score it ``repeats`` times."""
        started = time.perf_counter()
        tmp = Path(tempfile.mkdtemp(prefix="ea-judge-"))
        try:
            candidate = tmp / "candidate"
            export_commit(repo_dir, commit, candidate)
            exported = time.perf_counter()
            scores: list[float] = []
            feedback = ""
            for _ in range(self.repeats):
                score, feedback = self.score_once(candidate)
                if score is None:
                    return Verdict(
                        None, scores, feedback, exported - started, time.perf_counter() - exported
                    )
                scores.append(score)
            return Verdict(
                statistics.median(scores),
                scores,
                feedback,
                exported - started,
                time.perf_counter() - exported,
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def score_once(self, candidate: Path) -> tuple[float | None, str]:
        """Run the score command once on an exported candidate: (score or None, feedback)."""
        cmd = self.score_cmd.replace("{candidate}", shlex.quote(str(candidate)))
        done = run_process(
            cmd,
            cwd=self.workdir,
            timeout=self.timeout,
            env={"EA_CANDIDATE": str(candidate)},
            shell=True,
        )
        if done.launch_error:
            return None, _tail(f"score command could not start: {done.launch_error}")
        if done.returncode is None:
            return None, _tail(f"score command timed out after {self.timeout:g}s\n" + done.stderr)
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        before = "\n".join(lines[:-1])
        if done.returncode != 0:
            msg = f"score command failed (exit {done.returncode})\n{before}\n{done.stderr}"
            return None, _tail(msg.strip())
        if not lines:
            return None, _tail("score command printed nothing\n" + done.stderr)
        try:
            value = float(lines[-1].strip())
        except ValueError:
            return None, _tail(f"last line is not a number: {lines[-1].strip()!r}\n{before}")
        if value != value or value in (float("inf"), float("-inf")):
            return None, _tail(f"score is not finite: {lines[-1].strip()}\n{before}")
        return value, _tail(before)


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= FEEDBACK_CHARS else "..." + text[-FEEDBACK_CHARS:]
