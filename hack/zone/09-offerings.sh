#!/usr/bin/env bash
# 09-offerings.sh: the compute, disk and network offerings the simulator's
# seeded zone has: fixed, customized and custom constrained compute
# offerings (createServiceOffering), fixed and customized disk offerings
# (createDiskOffering), and the isolated network offering with source NAT
# (createNetworkOffering, then updateNetworkOffering state=Enabled, as new
# network offerings start Disabled). A real CloudStack has
# $NETWORK_OFFERING from installation; it is then only enabled if needed.
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

offering=$(cs listNetworkOfferings name="$NETWORK_OFFERING" |
  jq -r --arg n "$NETWORK_OFFERING" '[.networkoffering[]? | select(.name == $n)][0] // empty | "\(.id) \(.state)"')
read -r id state <<<"$offering" || true
if [ -z "$id" ]; then
  services=(Dhcp Dns UserData SourceNat StaticNat PortForwarding Firewall Lb Vpn)
  args=(name="$NETWORK_OFFERING" displaytext="Offering for Isolated networks with Source Nat service enabled"
    guestiptype=Isolated traffictype=Guest availability=Required conservemode=true egressdefaultpolicy=false
    supportedservices="$(IFS=,; echo "${services[*]}")")
  for i in "${!services[@]}"; do
    args+=("serviceproviderlist[$i].service=${services[$i]}" "serviceproviderlist[$i].provider=VirtualRouter")
  done
  id=$(cs createNetworkOffering "${args[@]}" | jq -r '.networkoffering.id')
  state=Disabled
  log "created network offering $NETWORK_OFFERING"
fi
if [ "$state" != Enabled ]; then
  cs updateNetworkOffering id="$id" state=Enabled >/dev/null
  log "enabled network offering $NETWORK_OFFERING"
fi
