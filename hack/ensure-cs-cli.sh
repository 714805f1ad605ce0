#!/usr/bin/env bash
# Makes sure Debian's CloudStack CLI (package cs, binary /usr/bin/cloudstack)
# is installed: the simulator's tests use it as an independent client.
set -euo pipefail
if command -v cloudstack >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "Debian's cloudstack CLI is missing. Install it with: sudo apt-get install cs" >&2
  exit 1
fi
echo "installing Debian's cloudstack CLI (package cs)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq cs >/dev/null
command -v cloudstack >/dev/null
