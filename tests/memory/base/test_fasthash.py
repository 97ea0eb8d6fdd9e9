"""sha1 and sha256 without OpenSSL's start-up (memory/base/fasthash.py): hashlib's digests."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.memory.base import fasthash


@given(st.binary(max_size=4096))
def test_the_digests_are_hashlibs(data: bytes) -> None:
    assert fasthash.sha1(data).hexdigest() == hashlib.sha1(data).hexdigest()
    assert fasthash.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


def test_importing_it_does_not_load_openssl() -> None:
    code = (
        "import sys\n"
        "from evolving_agent.memory.base import fasthash\n"
        "fasthash.sha256(b'x').hexdigest()\n"
        "print('hashlib' in sys.modules, '_hashlib' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
