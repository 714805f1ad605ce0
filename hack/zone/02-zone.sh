#!/usr/bin/env bash
# 02-zone.sh: the advanced zone (createZone). It stays Disabled until
# 08-enable-zone.sh, as CloudStack requires physical networks and providers
# first.
set -euo pipefail
. "$(dirname "$0")/env.sh"

if [ -n "$(find_id listZones ".name == \"$ZONE_NAME\"" name="$ZONE_NAME")" ]; then
  log "zone $ZONE_NAME exists"
  exit 0
fi
cs createZone name="$ZONE_NAME" networktype=Advanced dns1="$ZONE_DNS" internaldns1="$ZONE_DNS" \
  guestcidraddress="$GUEST_CIDR" >/dev/null
log "created zone $ZONE_NAME"
