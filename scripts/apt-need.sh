# SPDX-License-Identifier: MIT OR Apache-2.0
# Sourced by scripts/cross-windows.sh and scripts/wine-test.sh (not run on its own).
#
# apt_need PKG...: installs the Debian packages among PKG that are not installed yet, with one
# `apt-get update` first; fails loudly, naming the packages, when that is not possible.

apt_installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

apt_need() {
  local missing=() pkg
  for pkg in "$@"; do
    apt_installed "$pkg" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  echo "installing missing Debian packages: ${missing[*]}"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: apt-get not found; install these Debian packages by hand: ${missing[*]}" >&2
    exit 1
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "error: not root and no sudo; install these Debian packages by hand: ${missing[*]}" >&2
      exit 1
    fi
  fi
  if ! "${sudo[@]}" apt-get update -qq; then
    echo "error: apt-get update failed; cannot install: ${missing[*]}" >&2
    exit 1
  fi
  if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null; then
    echo "error: apt-get install failed for: ${missing[*]}" >&2
    exit 1
  fi
  for pkg in "${missing[@]}"; do
    if ! apt_installed "$pkg"; then
      echo "error: Debian package $pkg is still not installed after apt-get install" >&2
      exit 1
    fi
  done
}
