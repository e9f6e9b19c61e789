#!/usr/bin/env bash
# Installs the Debian packages named, with apt-get, through sudo when not root; nothing when
# none is named. Shared by scripts/setup.sh and scripts/setup-tests.sh.
#   scripts/apt-install.sh WHO PACKAGE...     (WHO prefixes the messages)
set -euo pipefail

who="$1"
shift
[ $# -gt 0 ] || exit 0
echo "$who: installing $*"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "$who: need root or sudo to install $*" >&2; exit 1; }
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "$@"
