#!/usr/bin/env bash
# 30-stemcell.sh: a stemcell tarball shaped like the public CloudStack
# stemcell (bosh-linux-stemcell-builder's cloudstack infrastructure):
# stemcell.MF with api_version 3 and the cloudstack-vhdx format, and an
# `image` that is a bzip2'd dynamic VHD (hack/mkimage), not a tarball.
set -euo pipefail
. "$(dirname "$0")/env.sh"

# An existing stemcell is kept: a new tarball (other mtimes, other sha1)
# would make the next create-env upload it and recreate the VM.
if [ -s "$E2E_STEMCELL" ]; then
  log "stemcell $E2E_STEMCELL exists"
  exit 0
fi
work=$E2E_OUT/stemcell
rm -rf "$work"
mkdir -p "$work"
(cd "$E2E_ROOT" && $GO run ./hack/mkimage -kind vhd.bz2 -o "$work/image")
cat >"$work/stemcell.MF" <<MF
---
name: bosh-cloudstack-xen-ubuntu-jammy-go_agent
version: '$E2E_STEMCELL_VERSION'
bosh_protocol: 1
api_version: 3
sha1: $(sha1sum "$work/image" | cut -d' ' -f1)
operating_system: ubuntu-jammy
stemcell_formats:
- cloudstack-vhdx
cloud_properties:
  name: bosh-cloudstack-xen-ubuntu-jammy-go_agent
  version: '$E2E_STEMCELL_VERSION'
  infrastructure: cloudstack
  hypervisor: xen
  disk: 5120
  disk_format: vhdx
  container_format: bare
  os_type: linux
  os_distro: ubuntu
  architecture: x86_64
  auto_disk_config: true
MF
tar -czf "$E2E_STEMCELL.tmp" -C "$work" stemcell.MF image
mv "$E2E_STEMCELL.tmp" "$E2E_STEMCELL"
rm -rf "$work"
log "stemcell $E2E_STEMCELL ($(stat -c %s "$E2E_STEMCELL") bytes)"
