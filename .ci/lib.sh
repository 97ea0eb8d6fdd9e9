# Sourced by .ci/tools.sh: helpers the per-tool scripts in .ci/tools.d/ share.

# as_root CMD...: run CMD as root (directly when we are root, else through sudo).
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "tools: '$*' needs root (or sudo); install it by hand" >&2; return 1
  fi
}

# apt_install PKG...: install Debian packages that are missing; 'apt-get update' runs once.
_apt_updated=""
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ -z "$_apt_updated" ]; then as_root apt-get update -qq; _apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
