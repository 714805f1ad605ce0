#!/usr/bin/env bash
# Makes sure the Debian packages one make target drives are installed, and
# as root installs what is missing (otherwise it says what to install).
#   demo: jq and curl (hack/demo.sh reads the answers and the simulator's
#         request log), bzip2 (hack/mkimage compresses the stemcell image
#         the way the stemcell builder does)
#   test: those, and Debian's CloudStack CLI (package cs, binary
#         /usr/bin/cloudstack), an independent client the simulator is
#         checked against, xz-utils for test images, ruby, which
#         bosh-cli's template renderer runs (manifests/ tests), and
#         qemu-utils, whose qemu-img reads back the VHDs stemcell/diskimage
#         writes and makes its QCOW2 sources
#   e2e:  the cloudstack CLI (hack/zone), ruby (bosh create-env renders the
#         CPI job with it), jq, curl, bzip2 and iproute2 (the
#         network namespace)
# Usage: ensure-test-deps.sh [demo|test|e2e]   (default: test)
set -euo pipefail
set_name=${1:-test}
declare -A package=([cloudstack]=cs [ruby]=ruby [bzip2]=bzip2 [xz]=xz-utils [curl]=curl [jq]=jq [ip]=iproute2
  [qemu-img]=qemu-utils)
case $set_name in
demo) cmds=(jq curl bzip2) ;;
test) cmds=(cloudstack ruby bzip2 xz curl jq qemu-img) ;;
e2e) cmds=(cloudstack ruby jq curl bzip2 ip) ;;
*) echo "usage: $0 [demo|test|e2e]" >&2; exit 2 ;;
esac
missing=()
for cmd in "${cmds[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${package[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "make $set_name needs Debian packages that are missing. Install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq "${missing[@]}" >/dev/null
