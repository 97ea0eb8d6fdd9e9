# bubblewrap: search runs agents and scorers inside it when it is on PATH (--sandbox bwrap).
command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap
