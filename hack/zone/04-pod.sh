#!/usr/bin/env bash
# 04-pod.sh: the zone's pod and its management IP range (createPod).
set -euo pipefail
. "$(dirname "$0")/env.sh"

zone=$(zone_id)
if [ -n "$(find_id listPods ".name == \"$POD_NAME\"" zoneid="$zone" name="$POD_NAME")" ]; then
  log "pod $POD_NAME exists"
  exit 0
fi
cs createPod zoneid="$zone" name="$POD_NAME" gateway="$POD_GATEWAY" netmask="$POD_NETMASK" \
  startip="$POD_START" endip="$POD_END" >/dev/null
log "created pod $POD_NAME"
