#!/usr/bin/env bash
# 10-network.sh: the admin's isolated guest network (createNetwork) on
# $NETWORK_OFFERING, in the zone's guest CIDR unless
# GUEST_NETWORK_GATEWAY/GUEST_NETWORK_NETMASK name another (RFC 1918/6598:
# CloudStack refuses public ranges for isolated networks).
set -euo pipefail
. "$(dirname "$0")/env.sh"

zone=$(zone_id)
if [ -n "$(find_id listNetworks ".name == \"$GUEST_NETWORK\"" zoneid="$zone" listall=true)" ]; then
  log "network $GUEST_NETWORK exists"
  exit 0
fi
offering=$(find_id listNetworkOfferings ".name == \"$NETWORK_OFFERING\"" name="$NETWORK_OFFERING")
[ -n "$offering" ] || die "network offering $NETWORK_OFFERING does not exist: run 09-offerings.sh"
args=(name="$GUEST_NETWORK" displaytext="$GUEST_NETWORK" zoneid="$zone" networkofferingid="$offering")
if [ -n "$GUEST_NETWORK_GATEWAY" ]; then
  args+=(gateway="$GUEST_NETWORK_GATEWAY" netmask="$GUEST_NETWORK_NETMASK")
fi
cs createNetwork "${args[@]}" >/dev/null
log "created network $GUEST_NETWORK"
