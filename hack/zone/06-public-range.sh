#!/usr/bin/env bash
# 06-public-range.sh: the zone's public IP range (createVlanIpRange with
# forvirtualnetwork=true), from which source NAT and static NAT addresses
# come.
set -euo pipefail
. "$(dirname "$0")/env.sh"

zone=$(zone_id)
if [ -n "$(find_id listVlanIpRanges ".startip == \"$PUBLIC_START\"" zoneid="$zone")" ]; then
  log "public range from $PUBLIC_START exists"
  exit 0
fi
cs createVlanIpRange zoneid="$zone" forvirtualnetwork=true vlan="$PUBLIC_VLAN" gateway="$PUBLIC_GATEWAY" \
  netmask="$PUBLIC_NETMASK" startip="$PUBLIC_START" endip="$PUBLIC_END" >/dev/null
log "created public range $PUBLIC_START-$PUBLIC_END (VLAN $PUBLIC_VLAN)"
