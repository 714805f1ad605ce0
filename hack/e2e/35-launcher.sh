#!/usr/bin/env bash
# 35-launcher.sh: the agent launcher (hack/e2e/launcher) in the namespace:
# a real bosh-agent for every VM the simulator runs. Safe to re-run.
set -euo pipefail
. "$(dirname "$0")/env.sh"

[ -s "$E2E_OUT/keys.env" ] || die "no $E2E_OUT/keys.env: run 10-simulator-up.sh"
[ -x "$E2E_AGENT" ] || die "no bosh-agent at $E2E_AGENT: run 20-release.sh"
if alive launcher; then
  log "the launcher is running (pid $(cat "$PIDS/launcher"))"
  exit 0
fi
(cd "$E2E_ROOT" && $GO build -o "$E2E_OUT/launcher" ./hack/e2e/launcher)
set -a
. "$E2E_OUT/keys.env"
set +a
mkdir -p "$E2E_OUT/agents"
start launcher "$E2E_OUT/launcher.log" "$E2E_OUT/launcher" -api "$CS_API_URL" -agent "$E2E_AGENT" \
  -dir "$E2E_OUT/agents" -interval "$E2E_POLL_INTERVAL"
wait_for "$E2E_READY_TIMEOUT" "the launcher to watch the simulator" grep -q 'launcher: watching' "$E2E_OUT/launcher.log"
log "started the launcher (pid $(cat "$PIDS/launcher")), log in $E2E_OUT/launcher.log"
