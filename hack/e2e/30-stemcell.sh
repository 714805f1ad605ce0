#!/usr/bin/env bash
# 30-stemcell.sh: a stemcell tarball of the shape E2E_STEMCELL_KIND names.
#   cloudstack: shaped like the public CloudStack stemcell
#     (bosh-linux-stemcell-builder's cloudstack infrastructure): stemcell.MF
#     with api_version 3 and the cloudstack-vhdx format, and an `image` that
#     is a bzip2'd dynamic VHD (hack/mkimage), not a tarball.
#   openstack: shaped exactly like bosh.io's OpenStack KVM stemcell
#     (bosh-openstack-kvm-ubuntu-jammy-go_agent): stemcell.MF's fields as
#     bosh-linux-stemcell-builder writes them for the openstack
#     infrastructure (openstack-qcow2 and openstack-raw formats,
#     infrastructure openstack, hypervisor kvm, disk_format qcow2,
#     auto_disk_config), and an `image` that is a tgz of a qcow2 root.img
#     (hack/mkimage). The KVM phase and the XenServer/OpenStack phase take it.
#   vsphere: shaped like bosh.io's vSphere stemcell
#     (bosh-vsphere-esxi-ubuntu-jammy-go_agent): stemcell.MF's fields as the
#     builder writes them for the vsphere infrastructure (StemcellPackager,
#     Infrastructure::Vsphere: vsphere-ova and vsphere-ovf formats,
#     infrastructure vsphere, hypervisor esxi, disk_format ovf,
#     root_device_name /dev/sda1), and an `image` that is a tgz of
#     image.ovf, image.mf and image-disk1.vmdk (hack/mkimage).
set -euo pipefail
. "$(dirname "$0")/env.sh"

# An existing stemcell is kept: a new tarball (other mtimes, other sha1)
# would make the next create-env upload it and recreate the VM.
if [ -s "$E2E_STEMCELL" ]; then
  log "stemcell $E2E_STEMCELL exists"
  exit 0
fi
extra='auto_disk_config: true'
case $E2E_STEMCELL_KIND in
  openstack) kind=openstack-tgz infrastructure=openstack hypervisor=kvm disk_format=qcow2
    formats=$'- openstack-qcow2\n- openstack-raw' ;;
  vsphere) kind=vsphere-tgz infrastructure=vsphere hypervisor=esxi disk_format=ovf
    formats=$'- vsphere-ova\n- vsphere-ovf' extra='root_device_name: /dev/sda1' ;;
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
  $extra
MF
tar -czf "$E2E_STEMCELL.tmp" -C "$work" stemcell.MF image
mv "$E2E_STEMCELL.tmp" "$E2E_STEMCELL"
rm -rf "$work"
log "stemcell $E2E_STEMCELL ($name, $(stat -c %s "$E2E_STEMCELL") bytes)"
