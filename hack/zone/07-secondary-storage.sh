#!/usr/bin/env bash
# 07-secondary-storage.sh: the zone's NFS secondary storage (addImageStore),
# where templates live.
set -euo pipefail
. "$(dirname "$0")/env.sh"

zone=$(zone_id)
if [ -n "$(find_id listImageStores ".url == \"$SECONDARY_URL\"" zoneid="$zone")" ]; then
  log "secondary storage $SECONDARY_URL exists"
  exit 0
fi
cs addImageStore zoneid="$zone" provider=NFS url="$SECONDARY_URL" >/dev/null
log "added secondary storage $SECONDARY_URL"
