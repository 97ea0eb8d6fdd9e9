#!/usr/bin/env bash
# Installs the real parts the tests drive (bubblewrap, Chromium, the pinned coding CLIs, OS
# users, ...). One script per tool in .ci/tools.d/, each idempotent: it returns at once when
# its tool is already there, so a developer's second run costs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib.sh
for script in .ci/tools.d/*.sh; do
  [ -e "$script" ] || continue
  . "$script"
done
