#!/usr/bin/env bash
# Makes sure the programs the tests use are installed: Debian's CloudStack
# CLI (package cs, binary /usr/bin/cloudstack), an independent client the
# simulator is checked against, bzip2/xz, which make stemcell images the
# way the stemcell builder does, and ruby, which bosh-cli's template renderer
# runs (manifests/ tests). As root it installs what is missing.
set -euo pipefail
declare -A package=([cloudstack]=cs [ruby]=ruby [bzip2]=bzip2 [xz]=xz-utils [curl]=curl [jq]=jq)
missing=()
for cmd in "${!package[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${package[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "The tests need Debian packages that are missing. Install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq "${missing[@]}" >/dev/null
