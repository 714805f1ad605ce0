#!/usr/bin/env bash
# 12-shared-network.sh: when SHARED_NETWORK is set, the admin's Shared guest
# network of that name (createNetwork on $SHARED_NETWORK_OFFERING) with its
# gateway, netmask, VLAN and address range. An admin's Shared network may
# use any range, even one in 127.0.0.0/8 (an Isolated one must be RFC 1918
# or 6598); the e2e harness uses that to run on the host's loopback.
set -euo pipefail
. "$(dirname "$0")/env.sh"

[ -n "$SHARED_NETWORK" ] || exit 0
zone=$(zone_id)
if [ -n "$(find_id listNetworks ".name == \"$SHARED_NETWORK\"" zoneid="$zone" listall=true)" ]; then
  log "network $SHARED_NETWORK exists"
  exit 0
fi
[ -n "$SHARED_NETWORK_GATEWAY" ] && [ -n "$SHARED_NETWORK_NETMASK" ] ||
  die "the Shared network $SHARED_NETWORK needs SHARED_NETWORK_GATEWAY and SHARED_NETWORK_NETMASK"
offering=$(find_id listNetworkOfferings ".name == \"$SHARED_NETWORK_OFFERING\"" name="$SHARED_NETWORK_OFFERING")
[ -n "$offering" ] || die "network offering $SHARED_NETWORK_OFFERING does not exist: run 09-offerings.sh"
args=(name="$SHARED_NETWORK" displaytext="$SHARED_NETWORK" zoneid="$zone" networkofferingid="$offering"
  gateway="$SHARED_NETWORK_GATEWAY" netmask="$SHARED_NETWORK_NETMASK" vlan="$SHARED_NETWORK_VLAN")
[ -z "$SHARED_NETWORK_START" ] || args+=(startip="$SHARED_NETWORK_START" endip="${SHARED_NETWORK_END:-$SHARED_NETWORK_START}")
cs createNetwork "${args[@]}" >/dev/null
log "created Shared network $SHARED_NETWORK ($SHARED_NETWORK_GATEWAY/$SHARED_NETWORK_NETMASK)"
