"""The OS-user deployment, run with two real OS users (memory/sync/deploy.py).

Each module run creates a group and two throwaway users with ``groupadd`` / ``useradd``
(unique names, removed at teardown), builds a root as the human's user, deploys it as
root (what ``sudo evolving-agent deploy os-users`` does), then runs the CLI as each
user with ``setpriv`` and checks what the operating system lets the assistant's user
do: append friction, set the Live Bus, boot - and nothing in canon/, reviews/, .git or
.ea/, whatever it says it is.

Root is required: only root creates users and switches to them.  CI runs as root.
Without root these tests *fail* with a message saying so rather than skip: a boundary
test that quietly does not run would let the suite claim a boundary nobody checked.

The users need the package importable: the running interpreter may sit in a directory
they cannot enter (pyenv under /root), so the tests look for a world-executable Python
of the same version and give it the running environment's import path; when that path
is not readable by others it is copied into a world-readable temp directory.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import pkgutil
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

import evolving_agent

pytestmark = pytest.mark.slow


@dataclass
class Users:
    human: str
    assistant: str
    group: str
    base: Path  # world-traversable temp directory holding the roots
    python: str
    pythonpath: str

    def env(self, user: str, root: Path) -> dict[str, str]:
        home = pwd.getpwnam(user).pw_dir
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": home,
            "USER": user,
            "LANG": "C.UTF-8",
            "PYTHONPATH": self.pythonpath,
            "PYTHONDONTWRITEBYTECODE": "1",
            "EVOLVING_AGENT_ROOT": str(root),
        }

    def run(
        self, user: str, root: Path, *argv: str, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run a program as ``user`` (its own uid, primary group and groups)."""
        return subprocess.run(
            ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--", *argv],
            env=self.env(user, root),
            cwd=str(self.base),
            input=input,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def ea(
        self, user: str, root: Path, *args: str, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.run(user, root, self.python, "-m", "evolving_agent", *args, input=input)

    def sh(self, user: str, root: Path, script: str) -> subprocess.CompletedProcess[str]:
        return self.run(user, root, "/bin/sh", "-c", f"cd {root} && {script}")


def _require_root() -> None:
    if os.geteuid() != 0:
        pytest.fail(
            "the OS-user deployment tests need root (they create two OS users and run as "
            "them with setpriv); CI runs as root - run them as root, e.g. in a container"
        )
    for tool in ("useradd", "userdel", "groupadd", "groupdel", "setpriv", "ssh-keygen"):
        if shutil.which(tool) is None:
            pytest.fail(f"the OS-user deployment tests need {tool!r} on PATH")


def _world_readable(path: Path) -> bool:
    """Whether a user with no special rights can read ``path`` (others' bits)."""
    try:
        for directory in [*reversed(path.parents)]:
            if not os.stat(directory).st_mode & 0o001:
                return False
        return bool(os.stat(path).st_mode & 0o004)
    except OSError:
        return False


# What the commands these tests run import (with every module of the package); only
# that is copied when the running environment is not readable by other users (a full
# site-packages can be ~1 GB).
_USED = (
    "evolving_agent.cli",
    "evolving_agent.cli.memory_cmds",
    "evolving_agent.cli.hypothesis_cmds",
    "evolving_agent.cli.run_cmds",
    "evolving_agent.cli.signing_cmds",
    "evolving_agent.cli.deploy_cmds",
    "evolving_agent.jobs.nightly",
    "evolving_agent.jobs.weekly",
    "evolving_agent.jobs.monthly",
    "evolving_agent.memory.verify",
    "freezegun",
    "yaml",
)


def _import_path(base: Path) -> list[str]:
    source = Path(evolving_agent.__file__).parent.parent
    sites = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    if all(_world_readable(Path(p)) for p in (str(source), *sites)):
        return [str(source), *sites]
    for name in _USED:
        importlib.import_module(name)
    # Modules import some dependencies lazily: import every module of the package too.
    for info in pkgutil.walk_packages(evolving_agent.__path__, "evolving_agent."):
        if info.name.endswith("__main__"):
            continue  # importing it runs the CLI
        try:
            importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - a module of an extra that is not installed
            continue
    files = [getattr(m, "__file__", None) or "" for m in list(sys.modules.values())]
    # ... and the core dependencies' own files (some are read as data, never imported).
    for req in importlib.metadata.requires("evolving-agent") or []:
        if "extra ==" in req:
            continue
        name = re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0]
        dist = importlib.metadata.distribution(name)
        files += [str(dist.locate_file(f)) for f in dist.files or []]
    tops: set[tuple[str, str]] = set()
    for file in files:
        for site in sites:
            if file.startswith(site + os.sep):
                tops.add((site, Path(file).relative_to(site).parts[0]))
    lib = base / "pylib"
    shutil.copytree(source / "evolving_agent", lib / "evolving_agent", symlinks=True)
    for site, top in sorted(tops):
        src, dest = Path(site) / top, lib / top
        if dest.exists():
            continue
        if src.is_dir():
            shutil.copytree(src, dest, symlinks=True)
        else:
            shutil.copy2(src, dest)
    subprocess.run(["chmod", "-R", "a+rX", str(lib)], check=True)
    return [str(lib)]


def _python_for(users: Users, probe_user: str) -> None:
    """Find a Python the users can run, with this environment importable."""
    wanted = f"{sys.version_info[0]}.{sys.version_info[1]}"
    users.pythonpath = os.pathsep.join(_import_path(users.base))
    candidates = [
        os.path.realpath(sys.executable),
        f"/usr/bin/python{wanted}",
        f"/usr/local/bin/python{wanted}",
    ]
    for candidate in candidates:
        if not Path(candidate).exists():
            continue
        users.python = candidate
        probe = users.run(
            probe_user,
            users.base,
            candidate,
            "-c",
            "import sys, evolving_agent.cli, pydantic, filelock, yaml; "
            "print('%d.%d' % sys.version_info[:2])",
        )
        if probe.returncode == 0 and probe.stdout.strip() == wanted:
            return
    pytest.fail(f"no Python {wanted} that another OS user can run was found ({candidates})")


@pytest.fixture(scope="module")
def users() -> Iterator[Users]:
    _require_root()
    tag = secrets.token_hex(3)
    group, human, assistant = f"eag{tag}", f"eah{tag}", f"eaa{tag}"
    base = Path(tempfile.mkdtemp(prefix="ea-osusers-", dir="/tmp"))
    base.chmod(0o755)
    made: list[tuple[str, str]] = []
    try:
        subprocess.run(["groupadd", group], check=True)
        made.append(("groupdel", group))
        for name in (human, assistant):
            subprocess.run(
                ["useradd", "-m", "-U", "-s", "/bin/sh", "-G", group, name],
                check=True,
                capture_output=True,
            )
            made.insert(0, ("userdel", name))
            # A home only its owner can enter: where the human keeps the signing key.
            Path(pwd.getpwnam(name).pw_dir).chmod(0o700)
        u = Users(human, assistant, group, base, "", "")
        _python_for(u, assistant)
        yield u
    finally:
        for tool, name in made:
            args = [tool, "-r", name] if tool == "userdel" else [tool, name]
            subprocess.run(args, capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _make_root(u: Users, name: str, *, deployed_by_root: bool = True) -> Path:
    """A root initialised by the human's user and deployed by root (or the human)."""
    home = u.base / name
    home.mkdir()
    os.chown(home, pwd.getpwnam(u.human).pw_uid, -1)
    home.chmod(0o755)
    root = home / "memory"
    done = u.ea(u.human, root, "init", str(root))
    assert done.returncode == 0, done.stderr
    args = ("deploy", "os-users", "--root", str(root),
            "--human", u.human, "--assistant", u.assistant, "--group", u.group)  # fmt: skip
    if deployed_by_root:
        deployed = subprocess.run(
            [sys.executable, "-m", "evolving_agent", *args], capture_output=True, text=True
        )
    else:
        deployed = u.ea(u.human, root, *args)
    assert deployed.returncode == 0, deployed.stderr
    assert "deployed" in deployed.stdout and deployed.stderr == "", deployed.stderr
    # The human's first note of the day: today's day file is the human's.
    done = u.ea(u.human, root, "friction", "set up the two-user deployment")
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def root(users: Users) -> Path:
    return _make_root(users, "plain")


def _records(root: Path) -> list[dict[str, object]]:
    out = []
    for path in sorted((root / "evidence").glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


# -- the set-up -------------------------------------------------------------------------


def test_deploy_gives_the_human_the_authority_and_the_group_evidence_and_live(
    users: Users, root: Path
) -> None:
    human_uid = pwd.getpwnam(users.human).pw_uid
    for rel in ("canon", "reviews/decisions", "reviews/pending", ".git", ".ea", "today"):
        st = (root / rel).stat()
        assert st.st_uid == human_uid, rel
        assert _mode(root / rel) == 0o2750, (rel, oct(_mode(root / rel)))
    assert _mode(root / "canon" / "identity.yaml") == 0o640
    assert _mode(root / "evidence") == 0o3770 and _mode(root / ".ea" / "evidence") == 0o3770
    assert _mode(root / "live") == 0o2770 and _mode(root / ".ea" / "locks") == 0o2770
    config = subprocess.run(
        ["git", "-C", str(root), "-c", f"safe.directory={root}", "config", "core.sharedRepository"],
        capture_output=True,
        text=True,
    )
    assert config.stdout.strip() == "0640"
    record = json.loads((root / ".ea" / "deploy.json").read_text())
    assert record["human"] == users.human and record["assistant"] == users.assistant
    # Idempotent: a second run changes nothing.
    again = subprocess.run(
        [sys.executable, "-m", "evolving_agent", "deploy", "os-users", "--root", str(root),
         "--human", users.human, "--assistant", users.assistant, "--group", users.group,
         "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["changed"] == 0


def test_deploy_refuses_a_user_outside_the_group(users: Users, root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evolving_agent", "deploy", "os-users", "--root", str(root),
         "--human", users.human, "--assistant", "root", "--group", users.group],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 4
    assert "may not be root" in done.stderr


def test_the_human_can_deploy_a_root_of_their_own_without_root(users: Users) -> None:
    root = _make_root(users, "by-human", deployed_by_root=False)
    assert _mode(root / "canon") == 0o2750 and _mode(root / "evidence") == 0o3770
    done = users.ea(users.assistant, root, "friction", "deployed by the human")
    assert done.returncode == 0, done.stderr
    done = users.sh(users.assistant, root, "echo x > canon/identity.yaml")
    assert done.returncode != 0 and "Permission denied" in done.stderr
    # The assistant's user cannot deploy (and so re-open) the root itself.
    again = users.ea(users.assistant, root, "deploy", "os-users", "--human", users.assistant,
                     "--assistant", users.human, "--group", users.group)  # fmt: skip
    assert again.returncode == 3 and "is not owned by" in again.stderr, again.stderr


# -- what the assistant's user may do ---------------------------------------------------


def test_the_assistant_appends_friction_sets_live_and_boots(users: Users, root: Path) -> None:
    a, h = users.assistant, users.human
    done = users.ea(a, root, "friction", "answered in German to an English question")
    assert done.returncode == 0, done.stderr
    done = users.ea(a, root, "live", "set", "thread", "parser refactor, stopped at tests")
    assert done.returncode == 0, done.stderr
    booted = users.ea(a, root, "boot")
    assert booted.returncode == 0, booted.stderr
    assert "parser refactor, stopped at tests" in booted.stdout
    # What the assistant created stays the group's, whatever its umask: the human
    # replaces the same Live Bus key under the same lock.
    assistant_uid = pwd.getpwnam(a).pw_uid
    for made in (root / "live" / "thread.json", root / ".ea" / "locks" / "live.lock"):
        assert made.stat().st_uid == assistant_uid
        assert _mode(made) == 0o660, (made, oct(_mode(made)))
    assert users.ea(h, root, "friction", "the human's own note").returncode == 0
    done = users.ea(h, root, "live", "set", "thread", "taken over by the human")
    assert done.returncode == 0, done.stderr
    done = users.ea(a, root, "live", "set", "thread", "and back to the assistant")
    assert done.returncode == 0, done.stderr
    texts = [r["text"] for r in _records(root) if r["kind"] == "friction"]
    assert texts[-2:] == ["answered in German to an English question", "the human's own note"]


def test_the_assistant_cannot_write_the_humans_areas_through_the_cli(
    users: Users, root: Path
) -> None:
    before = (root / "canon" / "identity.yaml").read_bytes()
    # Guards the claim "--as human": with a shell, the assistant's user can say it; the
    # OS refuses the write anyway, and the attempt is recorded in Evidence.
    done = users.ea(
        users.assistant, root, "write", "--as", "human", "canon", "identity.yaml",
        input="name: Someone else\n",
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "operating system refused" in done.stderr
    assert (root / "canon" / "identity.yaml").read_bytes() == before
    denied = [r for r in _records(root) if r["kind"] == "write-denied"]
    assert denied and denied[-1]["data"]["layer"] == "canon"  # type: ignore[index]
    # An actor the policy lets write Today, claimed by the assistant's user: the OS says no.
    done = users.ea(users.assistant, root, "write", "--as", "nightly", "today", "bias.md",
                    input="be someone else\n")  # fmt: skip
    assert done.returncode == 3 and "operating system refused" in done.stderr, done.stderr
    # The writer's own API, as the monthly job (a planted review) and as the human (a
    # decision): refused by the OS, recorded.
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from evolving_agent.errors import WriteDenied\n"
        "from evolving_agent.memory.authority import Writer\n"
        "from evolving_agent.paths import MemoryRoot\n"
        "root = MemoryRoot(Path(sys.argv[1]))\n"
        "for actor, area in (('monthly', 'pending'), ('human', 'decisions')):\n"
        "    try:\n"
        "        Writer(root, actor).write(area, 'rev-2026-12-7.json', '{}')\n"
        "    except WriteDenied as exc:\n"
        "        print(exc.exit_code, exc)\n"
    )
    done = users.run(users.assistant, root, users.python, "-c", script, str(root))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("3 ") for line in lines), done.stdout
    assert "pending/rev-2026-12-7.json: the operating system refused it" in lines[0]
    assert not (root / "reviews" / "pending" / "rev-2026-12-7.json").exists()
    assert not (root / "reviews" / "decisions" / "rev-2026-12-7.json").exists()
    layers = [r["data"]["layer"] for r in _records(root) if r["kind"] == "write-denied"]  # type: ignore[index]
    assert layers[-3:] == ["today", "pending", "decisions"]


@pytest.mark.parametrize(
    "script",
    [
        "echo 'name: Evil' > canon/identity.yaml",
        "echo x > canon/new.md",
        "echo '{}' > reviews/decisions/rev-2026-12-1.json",
        # Guards the planted review: the assistant's user cannot create the file at all.
        "echo '{}' > reviews/pending/rev-2026-12-7.json",
        "echo '{}' > .ea/canon-state.json",
        "echo '{}' > .ea/signing.json",
        "echo '{}' > .ea/deploy.json",
        "echo '[core]' >> .git/config",
        "git -c safe.directory='*' commit -q --allow-empty -m forged",
        "mv schedule.yaml schedule.old",
        "chmod 0777 canon",
    ],
)
def test_the_assistants_shell_is_refused_by_the_os(users: Users, root: Path, script: str) -> None:
    head = (root / ".git" / "HEAD").read_text()
    canon = {p.name: p.read_bytes() for p in (root / "canon").iterdir()}
    done = users.sh(users.assistant, root, script)
    assert done.returncode != 0, (script, done.stdout)
    assert "Permission denied" in done.stderr or "not permitted" in done.stderr, done.stderr
    assert (root / ".git" / "HEAD").read_text() == head
    assert {p.name: p.read_bytes() for p in (root / "canon").iterdir()} == canon
    assert not (root / "reviews" / "pending" / "rev-2026-12-7.json").exists()


def test_the_assistant_cannot_replace_or_delete_a_day_file_it_did_not_create(
    users: Users, root: Path
) -> None:
    # The human wrote first today: the day file is the human's (sticky evidence/).
    day = root / "evidence" / f"{date.today().isoformat()}.jsonl"
    assert day.stat().st_uid == pwd.getpwnam(users.human).pw_uid
    before = day.read_bytes()
    for script in (
        f"cp {day} evidence/forged && mv evidence/forged {day}",
        f"rm -f {day}",
        f"mv {day} evidence/moved.jsonl",
    ):
        done = users.sh(users.assistant, root, script)
        assert done.returncode != 0, script
        assert day.read_bytes()[: len(before)] == before
    users.sh(users.assistant, root, "rm -f evidence/forged")


def test_a_hard_linked_day_file_is_refused_and_reported(users: Users, root: Path) -> None:
    # Guards the hard link from a day file to Canon: the OS refuses a link to a file the
    # assistant's user neither owns nor may write (fs.protected_hardlinks) ...
    done = users.sh(users.assistant, root, "ln canon/identity.yaml evidence/2099-01-01.jsonl")
    protected = Path("/proc/sys/fs/protected_hardlinks").read_text().strip() == "1"
    if protected:
        assert done.returncode != 0
    # ... and a link to a file it may write makes the writer refuse the day and verify
    # report it.
    day = root / "evidence" / f"{date.today().isoformat()}.jsonl"
    done = users.sh(users.assistant, root, f"ln {day} live/planted.json")
    assert done.returncode == 0, done.stderr
    try:
        size = day.stat().st_size
        friction = users.ea(users.assistant, root, "friction", "through the link")
        assert friction.returncode == 4 and "hard links" in friction.stderr
        assert day.stat().st_size == size
        verify = users.ea(users.human, root, "verify")
        assert verify.returncode == 5
        assert "hard links" in verify.stderr
    finally:
        (root / "live" / "planted.json").unlink()
        (root / "evidence" / "2099-01-01.jsonl").unlink(missing_ok=True)


# -- the human's jobs -------------------------------------------------------------------


def test_the_human_runs_nightly_and_verify_accepts_what_the_assistant_wrote(
    users: Users, root: Path
) -> None:
    assert users.ea(users.assistant, root, "friction", "too long again").returncode == 0
    today = date.today().isoformat()
    for job in ("nightly", "weekly", "monthly"):
        done = users.ea(users.human, root, "run", job, "--date", today)
        assert done.returncode == 0, (job, done.stderr)
    verify = users.ea(users.human, root, "verify")
    assert verify.returncode == 0, verify.stderr
    assert "rests on the OS-user deployment" in verify.stdout + verify.stderr
    assert "human authority is a claim" not in verify.stdout + verify.stderr
    # Today is the human's, and the assistant's boot reads it.
    bias = root / "today" / "bias.md"
    assert bias.stat().st_uid == pwd.getpwnam(users.human).pw_uid
    assert _mode(bias) == 0o640
    booted = users.ea(users.assistant, root, "boot", "--format", "json")
    assert booted.returncode == 0, booted.stderr
    assert json.loads(booted.stdout)["bias"]
    # The assistant's friction on the day the human's nightly reflected is refused with the
    # dates (it would never be reflected), not lost: its user may still append otherwise.
    late = users.ea(users.assistant, root, "friction", "after nightly")
    assert late.returncode == 4 and f"already reflected {today}" in late.stderr, late.stderr
    live = users.ea(users.assistant, root, "live", "set", "thread", "still writable")
    assert live.returncode == 0, live.stderr
    assert users.ea(users.human, root, "verify").returncode == 0


def test_the_humans_nightly_seals_the_days_before_the_one_it_reflected(users: Users) -> None:
    # Guards a rewrite or replacement of a finished day by the assistant's user: once the
    # nightly job has reflected past it, the day is the human's and read-only for it.
    root = _make_root(users, "sealing")
    past = date.fromordinal(date.today().toordinal() - 2)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from freezegun import freeze_time\n"
        "from evolving_agent.memory.authority import Writer\n"
        "from evolving_agent.paths import MemoryRoot\n"
        f"with freeze_time('{past.isoformat()} 12:00:00'):\n"
        "    Writer(MemoryRoot(Path(sys.argv[1])), 'session').append('friction', 'a past day')\n"
    )
    done = users.run(users.assistant, root, users.python, "-c", script, str(root))
    assert done.returncode == 0, done.stderr
    day = root / "evidence" / f"{past.isoformat()}.jsonl"
    head = root / ".ea" / "evidence" / f"{past.isoformat()}.head"
    assistant_uid, human_uid = (pwd.getpwnam(n).pw_uid for n in (users.assistant, users.human))
    assert day.stat().st_uid == assistant_uid and _mode(day) == 0o660
    before = day.read_bytes()
    yesterday = date.fromordinal(date.today().toordinal() - 1).isoformat()
    nightly = users.ea(users.human, root, "run", "nightly", "--date", yesterday)
    assert nightly.returncode == 0, nightly.stderr
    for sealed in (day, head):
        assert sealed.stat().st_uid == human_uid and _mode(sealed) == 0o640, sealed
    assert day.read_bytes() == before
    for attack in (
        f"echo x >> {day}",
        f"truncate -s 0 {day}",
        f"rm -f {day}",
        f"cp {day} evidence/copy && mv evidence/copy {day}",
        f"echo '000000000000 {'0' * 64}' > {head}",
    ):
        done = users.sh(users.assistant, root, attack)
        assert done.returncode != 0, attack
    users.sh(users.assistant, root, "rm -f evidence/copy")
    assert day.read_bytes() == before
    # Today stays open to the assistant, and the human's verify accepts the sealed days.
    assert users.ea(users.assistant, root, "friction", "still today").returncode == 0
    a = users.assistant
    done = users.ea(a, root, "hypothesis", "add", "--as", "session", "I answer too long")
    assert done.returncode == 0, done.stderr
    # The CLI's default actor is the human, whose register in today/ the OS keeps from
    # the assistant's user: refused before anything is appended.
    records = len(_records(root))
    done = users.ea(a, root, "hypothesis", "add", "I answer too short")
    assert done.returncode == 3 and "operating system refused" in done.stderr, done.stderr
    assert [r["kind"] for r in _records(root)[records:]] == ["write-denied"]
    verify = users.ea(users.human, root, "verify")
    assert verify.returncode == 0, verify.stderr


# -- signing behind the boundary --------------------------------------------------------


@pytest.fixture(scope="module")
def signed(users: Users) -> Path:
    root = _make_root(users, "signed")
    home = Path(pwd.getpwnam(users.human).pw_dir)
    key = home / ".ssh" / "evolving-agent"
    made = users.sh(
        users.human,
        root,
        f"mkdir -m 700 -p {key.parent} && ssh-keygen -q -t ed25519 -N '' -f {key}",
    )
    assert made.returncode == 0, made.stderr
    done = users.ea(users.human, root, "signing", "enable", "--key", str(key))
    assert done.returncode == 0, done.stderr
    return root


def test_signing_the_key_and_the_pinned_signers_are_out_of_the_assistants_reach(
    users: Users, signed: Path
) -> None:
    home = Path(pwd.getpwnam(users.human).pw_dir)
    key = home / ".ssh" / "evolving-agent"
    for path in (key, home / ".config" / "evolving-agent" / "signing"):
        done = users.sh(users.assistant, signed, f"cat {path} || ls {path}")
        assert done.returncode != 0 and "Permission denied" in done.stderr
    # The human signs a Canon change; verify (as the human) accepts it.
    text = (signed / "canon" / "identity.yaml").read_text()
    done = users.ea(
        users.human, signed, "write", "--as", "human", "canon", "identity.yaml",
        input=text.replace("values: []", "values: [brevity]") if "values: []" in text
        else text + "\n# signed by the human\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    verify = users.ea(users.human, signed, "verify")
    assert verify.returncode == 0, verify.stderr
    # git keeps the new commit's objects group-readable: the assistant's boot checks the
    # signed commit Canon is served from, reading .git itself.
    booted = users.ea(users.assistant, signed, "boot")
    assert booted.returncode == 0, booted.stderr
    assert "Notice" not in booted.stdout and booted.stderr == "", booted.stderr
    # The assistant's user sees that signing is on, and can neither sign as the human,
    # nor re-pin its own key, nor write a decision or a commit.
    status = users.ea(users.assistant, signed, "signing", "status")
    assert status.returncode == 0 and "signing: on" in status.stdout
    own = users.sh(users.assistant, signed, "ssh-keygen -q -t ed25519 -N '' -f $HOME/k")
    assert own.returncode == 0, own.stderr
    assistant_home = pwd.getpwnam(users.assistant).pw_dir
    for args in (
        ("write", "--as", "human", "canon", "identity.yaml"),
        ("signing", "enable", "--key", f"{assistant_home}/k"),
    ):
        done = users.ea(users.assistant, signed, *args, input="name: Someone else\n")
        assert done.returncode == 3, (args, done.stderr)
    forged = users.sh(
        users.assistant,
        signed,
        "echo '{}' > reviews/decisions/rev-2026-12-1.json && "
        "ssh-keygen -Y sign -n evolving-agent-decision -f $HOME/k "
        "reviews/decisions/rev-2026-12-1.json",
    )
    assert forged.returncode != 0 and "Permission denied" in forged.stderr
    verify = users.ea(users.human, signed, "verify")
    assert verify.returncode == 0, verify.stderr


# -- locks the human owns -----------------------------------------------------------------

_HOLD = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
)


@contextmanager
def _held_by(users: Users, user: str, root: Path, path: Path) -> Iterator[int]:
    """A process of ``user`` holding an exclusive flock on ``path`` (made 0600 if new)
    until the block ends; yields its pid once it holds the lock."""
    proc = subprocess.Popen(
        ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--",
         users.python, "-c", _HOLD, str(path)],
        env=users.env(user, root), cwd=str(users.base),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline() == "held\n"  # the event: it holds the lock now
        yield proc.pid
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def test_a_lock_file_the_assistant_squats_costs_the_human_no_nightly(users: Users) -> None:
    # Guards issue 31's "a pre-created run-nightly-DAY.lock makes the human's nightly
    # exit 3 for that day": the human's run locks are where only the human creates files.
    root = _make_root(users, "squat")
    assert users.ea(users.assistant, root, "friction", "too long again").returncode == 0
    today = date.today().isoformat()
    squat = root / ".ea" / "locks" / f"run-nightly-{today}.lock"
    done = users.sh(users.assistant, root, f"umask 077 && : > {squat} && : > .ea/locks/today.lock")
    assert done.returncode == 0, done.stderr
    made = users.sh(users.assistant, root, "mkdir .ea/human-locks")
    assert made.returncode != 0 and "Permission denied" in made.stderr
    with _held_by(users, users.assistant, root, squat):
        done = users.ea(users.human, root, "run", "nightly", "--date", today)
        assert done.returncode == 0, done.stderr
    # And the day is not lost after the squatter is gone either: run again, same result.
    again = users.ea(users.human, root, "run", "nightly", "--date", today)
    assert again.returncode == 0, again.stderr
    made = users.sh(users.assistant, root, f": > .ea/human-locks/run-nightly-{today}.lock")
    assert made.returncode != 0 and "Permission denied" in made.stderr
    assert users.ea(users.human, root, "verify").returncode == 0


def test_a_flock_the_assistant_holds_on_todays_evidence_delays_friction_seconds(
    users: Users,
) -> None:
    # Guards "a lock it holds on today's Evidence file hangs the human's friction until
    # its timeout": another user's flock is waited for seconds, then named (exit 3).
    root = _make_root(users, "flocked")
    day_file = root / "evidence" / f"{date.today().isoformat()}.jsonl"
    assert day_file.is_file()
    with _held_by(users, users.assistant, root, day_file) as pid:
        done = users.ea(users.human, root, "friction", "while the assistant holds the day")
        assert done.returncode == 3, (done.stdout, done.stderr)
        line = done.stderr.strip()
        assert len(line.splitlines()) == 1, line
        assert f"locked by user '{users.assistant}' (pid {pid}" in line
        assert "gave up after" in line and "nothing was written" in line
    done = users.ea(users.human, root, "friction", "once it let go")
    assert done.returncode == 0, done.stderr
    texts = [r["text"] for r in _records(root) if r["kind"] == "friction"]
    assert "while the assistant holds the day" not in texts and "once it let go" in texts
    assert users.ea(users.human, root, "verify").returncode == 0


def test_a_flock_the_assistant_holds_on_the_live_lock_is_named(users: Users) -> None:
    root = _make_root(users, "live-held")
    lock = root / ".ea" / "locks" / "live.lock"
    assert users.ea(users.assistant, root, "live", "set", "thread", "mine").returncode == 0
    with _held_by(users, users.assistant, root, lock) as pid:
        done = users.ea(users.human, root, "live", "set", "thread", "the human's")
        assert done.returncode == 3, (done.stdout, done.stderr)
        assert f"locked by user '{users.assistant}' (pid {pid}" in done.stderr
    done = users.ea(users.human, root, "live", "set", "thread", "the human's")
    assert done.returncode == 0, done.stderr
