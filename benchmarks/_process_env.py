"""The environment the whole-process benchmarks give the commands they time.

A git identity (Canon commits need one; a fresh machine may have none), and no
``PYTHONDONTWRITEBYTECODE``: the warm-up runs write the ``.pyc`` files an installed
package has, and with it set (CI and some shells set it) every timed run would compile
every module from source, several times what the imports cost.  As the suite does
(``tests/conftest.py``).
"""

from __future__ import annotations

import os


def bench_env(**extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        **extra,
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
