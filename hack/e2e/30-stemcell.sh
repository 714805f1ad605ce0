#!/usr/bin/env bash
# 30-stemcell.sh: a stemcell tarball for the hosts E2E_HYPERVISOR runs.
#   XenServer: shaped like the public CloudStack stemcell
#     (bosh-linux-stemcell-builder's cloudstack infrastructure): stemcell.MF
#     with api_version 3 and the cloudstack-vhdx format, and an `image` that
#     is a bzip2'd dynamic VHD (hack/mkimage), not a tarball.
#   KVM: shaped exactly like bosh.io's OpenStack KVM stemcell
#     (bosh-openstack-kvm-ubuntu-jammy-go_agent): stemcell.MF's fields as
#     bosh-linux-stemcell-builder writes them for the openstack
#     infrastructure (openstack-qcow2 and openstack-raw formats,
#     infrastructure openstack, hypervisor kvm, disk_format qcow2), and an
#     `image` that is a tgz of a qcow2 root.img (hack/mkimage).
set -euo pipefail
. "$(dirname "$0")/env.sh"

# An existing stemcell is kept: a new tarball (other mtimes, other sha1)
# would make the next create-env upload it and recreate the VM.
if [ -s "$E2E_STEMCELL" ]; then
  log "stemcell $E2E_STEMCELL exists"
  exit 0
fi
case $E2E_HYPERVISOR in
  KVM) kind=openstack-tgz infrastructure=openstack hypervisor=kvm disk_format=qcow2
    formats=$'- openstack-qcow2\n- openstack-raw' ;;
  *) kind=vhd.bz2 infrastructure=cloudstack hypervisor=xen disk_format=vhdx formats='- cloudstack-vhdx' ;;
esac
name=bosh-$infrastructure-$hypervisor-ubuntu-jammy-go_agent
work=$E2E_OUT/stemcell
rm -rf "$work"
mkdir -p "$work"
(cd "$E2E_ROOT" && $GO run ./hack/mkimage -kind "$kind" -o "$work/image")
cat >"$work/stemcell.MF" <<MF
---
name: $name
version: '$E2E_STEMCELL_VERSION'
bosh_protocol: 1
api_version: 3
sha1: $(sha1sum "$work/image" | cut -d' ' -f1)
operating_system: ubuntu-jammy
stemcell_formats:
$formats
cloud_properties:
  name: $name
  version: '$E2E_STEMCELL_VERSION'
  infrastructure: $infrastructure
  hypervisor: $hypervisor
  disk: 5120
  disk_format: $disk_format
  container_format: bare
  os_type: linux
  os_distro: ubuntu
  architecture: x86_64
  auto_disk_config: true
MF
tar -czf "$E2E_STEMCELL.tmp" -C "$work" stemcell.MF image
mv "$E2E_STEMCELL.tmp" "$E2E_STEMCELL"
rm -rf "$work"
log "stemcell $E2E_STEMCELL ($name, $(stat -c %s "$E2E_STEMCELL") bytes)"
