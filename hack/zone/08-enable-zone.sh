#!/usr/bin/env bash
# 08-enable-zone.sh: enable the zone (updateZone allocationstate=Enabled).
set -euo pipefail
. "$(dirname "$0")/env.sh"

zone=$(zone_id)
if [ "$(cs listZones id="$zone" | jq -r '.zone[0].allocationstate')" = Enabled ]; then
  log "zone $ZONE_NAME is enabled"
  exit 0
fi
cs updateZone id="$zone" allocationstate=Enabled >/dev/null
log "enabled zone $ZONE_NAME"
