"""SSH keys for the signing tests: a fresh ed25519 key, no passphrase, made by ssh-keygen."""

from __future__ import annotations

import subprocess
from pathlib import Path


def ssh_key(path: Path) -> Path:
    """A new ed25519 private key at ``path`` (its public half at ``path.pub``)."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", str(path)],
        check=True,
    )
    return path
