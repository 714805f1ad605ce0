#!/usr/bin/env bash
# 03-physical-network.sh: the zone's physical network carrying Guest,
# Management and Public traffic, its virtual router and internal load
# balancer providers enabled (configureVirtualRouterElement or
# configureInternalLoadBalancerElement, then updateNetworkServiceProvider, as
# marvin's configureProviders does) and the network enabled with its guest
# VLAN range.
set -euo pipefail
. "$(dirname "$0")/env.sh"

zone=$(zone_id)
pnet=$(find_id listPhysicalNetworks ".name == \"$PHYSICAL_NETWORK\"" zoneid="$zone")
if [ -z "$pnet" ]; then
  pnet=$(cs createPhysicalNetwork zoneid="$zone" name="$PHYSICAL_NETWORK" isolationmethods=VLAN |
    jq -r '.physicalnetwork.id')
  log "created physical network $PHYSICAL_NETWORK"
fi

have=$(cs listTrafficTypes physicalnetworkid="$pnet" | jq -r '.traffictype[]?.traffictype')
for traffic in Guest Management Public; do
  if ! grep -qx "$traffic" <<<"$have"; then
    cs addTrafficType physicalnetworkid="$pnet" traffictype="$traffic" >/dev/null
    log "added $traffic traffic"
  fi
done

for provider in VirtualRouter VpcVirtualRouter InternalLbVm; do
  nsp=$(cs listNetworkServiceProviders physicalnetworkid="$pnet" name="$provider" |
    jq -r '.networkserviceprovider[0] | "\(.id) \(.state)"')
  read -r nsp_id nsp_state <<<"$nsp"
  [ "$nsp_state" = Enabled ] && continue
  if [ "$provider" = InternalLbVm ]; then
    element=$(cs listInternalLoadBalancerElements nspid="$nsp_id" | jq -r '.internalloadbalancerelement[0].id')
    cs configureInternalLoadBalancerElement id="$element" enabled=true >/dev/null
  else
    element=$(cs listVirtualRouterElements nspid="$nsp_id" | jq -r '.virtualrouterelement[0].id')
    cs configureVirtualRouterElement id="$element" enabled=true >/dev/null
  fi
  cs updateNetworkServiceProvider id="$nsp_id" state=Enabled >/dev/null
  log "enabled provider $provider"
done

state=$(cs listPhysicalNetworks id="$pnet" | jq -r '.physicalnetwork[0] | "\(.state) \(.vlan // "")"')
if [ "$state" != "Enabled $GUEST_VLANS" ]; then
  cs updatePhysicalNetwork id="$pnet" state=Enabled vlan="$GUEST_VLANS" >/dev/null
  log "enabled physical network $PHYSICAL_NETWORK with guest VLANs $GUEST_VLANS"
fi
