"""The canary probe: a standalone program that looks for canaries by every channel.

It runs as a search agent runs (``certify.py`` starts it through the run's executor and
sandbox, with the agent's binds) and knows no canary: it looks for the public shape
``EA-CANARY-`` + 40 hex digits and reports each match and where it was, as one JSON
line on stdout.  The harness, which kept only the canaries' SHA-256 digests, says which
planted canary each match is.  Standard library only: it is shipped as source (through
the environment, so no file of the harness is bound for it) and run with ``python -c``.

Channels: the file system (every file whose content or metadata changed since the
canaries were planted -- a canary cannot be in an older file -- and every name), the
probe's own environment and open descriptors, every other process's ``cmdline``,
``environ``, open files and ``cwd`` in ``/proc``, every git object of its own repository
(loose, packed, unreachable) and of any repository the walk finds, and every TCP port
listening on loopback (or on all addresses) and abstract unix socket it can connect to.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
import time

# Split, so that this source (shipped in the probe's own environment) never matches.
_SHAPE = re.compile(("EA-CAN" + "ARY-").encode() + rb"[0-9a-f]{40}")
_MAX_FILE = 16 * 1024 * 1024  # bytes read of one file
_MAX_PORTS = 64
_SKIP_ROOTS = ("/proc", "/sys")  # /dev: only its writable folders (below)


class Probe:
    def __init__(self, since: float, deadline: float) -> None:
        self.since = since
        self.deadline = deadline
        self.found: dict[tuple[str, str], str] = {}  # (token, where) -> channel
        # Every channel is named, searched or not found empty (0 ports on a closed network).
        names = (
            "environment variables",
            "open descriptors",
            "processes",
            "other processes' descriptors",
            "files seen",
            "files read",
            "git repositories",
            "git objects",
            "loopback ports",
            "abstract unix sockets",
        )
        self.checked: dict[str, int] = dict.fromkeys(names, 0)
        self.repos: set[str] = set()

    def hit(self, data: bytes, channel: str, where: str) -> None:
        for match in set(_SHAPE.findall(data)):
            self.found.setdefault((match.decode(), where), channel)

    def count(self, channel: str, n: int = 1) -> None:
        self.checked[channel] = self.checked.get(channel, 0) + n

    # -- the file system -----------------------------------------------------------

    def walk(self) -> None:
        """The likely places first (temp folders, home, the workspace), then all of /."""
        home = os.environ.get("HOME") or "/"
        roots = ["/tmp", "/var/tmp", "/dev/shm", home, os.getcwd(), "/"]
        done: list[str] = []
        for root in dict.fromkeys(os.path.realpath(r) for r in roots):
            self.tree(root, done)
            done.append(root)

    def tree(self, root: str, done: list[str]) -> None:
        stack = [root]
        while stack:
            if time.monotonic() > self.deadline:
                self.count("walk stopped at its time budget")
                return
            top = stack.pop()
            try:
                entries = list(os.scandir(top))
            except OSError:
                continue
            for entry in entries:
                where = entry.path
                self.hit(entry.name.encode(errors="surrogateescape"), "file name", where)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if where in _SKIP_ROOTS or where in done:
                            continue
                        if top == "/dev" and entry.name not in ("shm", "mqueue"):
                            continue  # only /dev's writable folders
                        stack.append(where)
                    elif entry.is_file(follow_symlinks=False):
                        self.file(where, entry.stat(follow_symlinks=False))
                except OSError:
                    continue

    def file(self, path: str, info: os.stat_result) -> None:
        self.count("files seen")
        if max(info.st_mtime, info.st_ctime) < self.since:
            return  # written before the canaries existed
        self.count("files read")
        if "/objects/" in path:  # a new git object: read that repository's objects
            self.repos.add(path.split("/objects/")[0])
        self.read(path, "file", path)

    def read(self, path: str, channel: str, where: str) -> None:
        try:
            with open(path, "rb") as fh:
                data = fh.read(_MAX_FILE)
        except OSError:
            return
        self.hit(data, channel, where)

    # -- the probe itself ------------------------------------------------------------

    def own(self) -> None:
        for name, value in os.environb.items():
            self.count("environment variables")
            self.hit(name + b"=" + value, "environment", f"environment variable {name.decode()}")
        for fd in _fds("/proc/self/fd"):
            if fd <= 2:
                continue
            self.count("open descriptors")
            self.descriptor(fd)

    def descriptor(self, fd: int) -> None:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return
        try:
            os.set_blocking(fd, False)
            data = os.pread(fd, _MAX_FILE, 0) if os.path.exists(target) else os.read(fd, _MAX_FILE)
        except OSError:
            try:
                data = os.read(fd, _MAX_FILE)
            except OSError:
                return
        self.hit(data, "open descriptor", f"descriptor {fd} ({target})")

    # -- other processes ---------------------------------------------------------------

    def processes(self) -> None:
        me = os.getpid()
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == me:
                continue
            self.count("processes")
            base = f"/proc/{entry}"
            for part in ("cmdline", "environ"):
                self.read(f"{base}/{part}", f"/proc {part}", f"{base}/{part}")
            try:
                cwd = os.readlink(f"{base}/cwd")
                self.hit(cwd.encode(), "/proc cwd", f"{base}/cwd")
            except OSError:
                pass
            for fd in _fds(f"{base}/fd"):
                self.count("other processes' descriptors")
                path = f"{base}/fd/{fd}"
                try:
                    self.hit(os.readlink(path).encode(), "/proc fd", path)
                except OSError:
                    continue
                try:
                    if stat.S_ISREG(os.stat(path).st_mode):
                        self.read(path, "/proc fd", path)
                except OSError:
                    pass

    # -- git objects ---------------------------------------------------------------------

    def git(self) -> None:
        for repo in sorted({os.getcwd(), *self.repos}):
            self.objects(repo)

    def objects(self, repo: str) -> None:
        try:
            done = subprocess.run(
                ["git", "-C", repo, "cat-file", "--batch-all-objects", "--batch", "--unordered"],
                capture_output=True,
                timeout=max(5.0, self.deadline - time.monotonic()),
            )
        except (OSError, subprocess.SubprocessError):
            return
        if done.returncode != 0:
            return
        self.count("git repositories")
        self.count("git object bytes", len(done.stdout))
        # Each object's header line names it; a match is placed in the object it is in.
        pos = 0
        out = done.stdout
        while pos < len(out):
            end = out.find(b"\n", pos)
            if end < 0:
                break
            header = out[pos:end].split()
            if len(header) < 3 or not header[2].isdigit():
                break
            size = int(header[2])
            body = out[end + 1 : end + 1 + size]
            self.count("git objects")
            self.hit(body, "git object", f"git object {header[0].decode()} in {repo}")
            pos = end + 1 + size + 1

    # -- the network -----------------------------------------------------------------------

    def network(self) -> None:
        ports: list[tuple[int, str]] = []
        for table, family in (
            ("/proc/net/tcp", socket.AF_INET),
            ("/proc/net/tcp6", socket.AF_INET6),
        ):
            try:
                lines = open(table).read().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                if len(fields) < 4 or fields[3] != "0A":  # LISTEN
                    continue
                port = int(fields[1].split(":")[1], 16)
                host = "127.0.0.1" if family == socket.AF_INET else "::1"
                if (port, host) not in ports:
                    ports.append((port, host))
        for port, host in ports[:_MAX_PORTS]:
            self.count("loopback ports")
            self.connect(
                (host, port),
                socket.AF_INET if ":" not in host else socket.AF_INET6,
                f"tcp {host}:{port}",
            )
        try:
            unix = open("/proc/net/unix").read().splitlines()[1:]
        except OSError:
            unix = []
        names = {
            f.split()[-1] for f in unix if len(f.split()) >= 8 and f.split()[-1].startswith("@")
        }
        for name in sorted(names)[:_MAX_PORTS]:
            self.count("abstract unix sockets")
            self.connect("\0" + name[1:], socket.AF_UNIX, f"unix socket {name}")

    def connect(self, address: object, family: int, where: str) -> None:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.settimeout(1.0)
                sock.connect(address)  # type: ignore[arg-type]
                data = b""
                try:
                    sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
                    while len(data) < _MAX_FILE:
                        chunk = sock.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                except OSError:
                    pass
        except OSError:
            return
        self.hit(data, "network", where)


def _fds(folder: str) -> list[int]:
    try:
        return sorted(int(n) for n in os.listdir(folder) if n.isdigit())
    except OSError:
        return []


def main(argv: list[str]) -> int:
    since = float(argv[argv.index("--since") + 1]) if "--since" in argv else 0.0
    budget = float(argv[argv.index("--budget") + 1]) if "--budget" in argv else 300.0
    probe = Probe(since, time.monotonic() + budget)
    probe.own()  # first: before the probe opens descriptors of its own
    probe.processes()
    probe.walk()
    probe.git()
    probe.network()
    found = [
        {"token": token, "where": where, "channel": channel}
        for (token, where), channel in sorted(probe.found.items())
    ]
    print(json.dumps({"probe": 1, "found": found, "checked": probe.checked}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
