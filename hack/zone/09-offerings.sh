#!/usr/bin/env bash
# 09-offerings.sh: the compute, disk and network offerings the simulator's
# seeded zone has: fixed, customized and custom constrained compute
# offerings (createServiceOffering), fixed and customized disk offerings
# (createDiskOffering), and the isolated network offering with source NAT
# (createNetworkOffering, then updateNetworkOffering state=Enabled, as new
# network offerings start Disabled), and, when SHARED_NETWORK is set, the
# Shared one it uses. A real CloudStack has both from installation; they
# are then only enabled if needed.
set -euo pipefail
. "$(dirname "$0")/env.sh"

# compute NAME key=value...: a compute offering unless one has that name.
compute() {
  local name=$1
  shift
  if [ -z "$(find_id listServiceOfferings ".name == \"$name\"" name="$name")" ]; then
    cs createServiceOffering name="$name" displaytext="$name" "$@" >/dev/null
    log "created compute offering $name"
  fi
}
compute "Small Instance" cpunumber=1 cpuspeed=500 memory=512
compute "Medium Instance" cpunumber=1 cpuspeed=1000 memory=1024
compute "Custom" customized=true
compute "Custom Constrained" customized=true cpuspeed=1000 mincpunumber=1 maxcpunumber=2 \
  minmemory=512 maxmemory=4096

# disk NAME DISPLAYTEXT key=value...: a disk offering unless one has that name.
disk() {
  local name=$1 text=$2
  shift 2
  if [ -z "$(find_id listDiskOfferings ".name == \"$name\"" name="$name")" ]; then
    cs createDiskOffering name="$name" displaytext="$text" "$@" >/dev/null
    log "created disk offering $name"
  fi
}
disk Small "Small Disk, 5 GB" disksize=5
disk Medium "Medium Disk, 20 GB" disksize=20
disk Large "Large Disk, 100 GB" disksize=100
disk Custom "Custom Disk" customized=true

# network_offering NAME SERVICES KEY=VALUE...: the network offering NAME
# with SERVICES (comma-separated), each by $PROVIDER (the VirtualRouter
# unless set), created unless one has that name, and Enabled.
network_offering() {
  local name=$1 services=$2 id state
  shift 2
  read -r id state <<<"$(cs listNetworkOfferings name="$name" |
    jq -r --arg n "$name" '[.networkoffering[]? | select(.name == $n)][0] // empty | "\(.id) \(.state)"')" || true
  if [ -z "$id" ]; then
    local args=(name="$name" traffictype=Guest supportedservices="$services" "$@") svc i=0
    for svc in ${services//,/ }; do
      args+=("serviceproviderlist[$i].service=$svc" "serviceproviderlist[$i].provider=${PROVIDER:-VirtualRouter}")
      i=$((i + 1))
    done
    id=$(cs createNetworkOffering "${args[@]}" | jq -r '.networkoffering.id')
    state=Disabled
    log "created network offering $name"
  fi
  if [ "$state" != Enabled ]; then
    cs updateNetworkOffering id="$id" state=Enabled >/dev/null
    log "enabled network offering $name"
  fi
}
network_offering "$NETWORK_OFFERING" Dhcp,Dns,UserData,SourceNat,StaticNat,PortForwarding,Firewall,Lb,Vpn \
  displaytext="Offering for Isolated networks with Source Nat service enabled" guestiptype=Isolated \
  availability=Required conservemode=true egressdefaultpolicy=false
# As CloudStack's installation makes DefaultIsolatedNetworkOfferingForVpcNetworks
# (NetworkOrchestrator.configure): the VPC virtual router's services, its
# NetworkACL making it an offering for VPC tiers, conserve mode off.
PROVIDER=VpcVirtualRouter network_offering "$VPC_TIER_OFFERING" \
  Dhcp,Dns,UserData,NetworkACL,SourceNat,StaticNat,PortForwarding,Lb,Vpn \
  displaytext="Offering for Isolated VPC networks with Source Nat service enabled" guestiptype=Isolated \
  availability=Optional conservemode=false egressdefaultpolicy=false
if [ -n "$SHARED_NETWORK" ]; then
  # As CloudStack's installation makes DefaultSharedNetworkOffering
  # (ConfigurationServerImpl.createDefaultNetworkOfferings): Dhcp, Dns and
  # UserData by the virtual router (UserData: the metadata service answers
  # the VM's agent), the VLAN and IP range given per network.
  network_offering "$SHARED_NETWORK_OFFERING" Dhcp,Dns,UserData displaytext="Offering for Shared networks" \
    guestiptype=Shared availability=Optional specifyvlan=true specifyipranges=true
fi
