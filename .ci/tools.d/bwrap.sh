# bubblewrap: search runs agents and scorers inside it when it is on PATH (--sandbox bwrap).
command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap
# socat: Claude Code's own sandbox (bubblewrap + socat on Linux) confines the claude
# agent's Bash, which the harness's bwrap never wraps (tests/integrations).
command -v socat >/dev/null 2>&1 || apt_install socat
