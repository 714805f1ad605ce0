#!/usr/bin/env bash
# down.sh: stop everything the harness started (by the pids it recorded:
# the launcher first, which takes its agents down with it, then the
# simulator), remove the network namespace and $E2E_OUT. Safe after a failed
# or interrupted up.sh, and when nothing is up.
set -uo pipefail
. "$(dirname "$0")/env.sh"

stop() {
  local name=$1 pid
  pid=$(cat "$PIDS/$name" 2>/dev/null) || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    log "stopped $name (pid $pid)"
  fi
  rm -f "$PIDS/$name"
}
stop launcher
stop simulator

if [ -n "$E2E_NETNS" ] && ip netns list 2>/dev/null | grep -qw "$E2E_NETNS"; then
  # Anything still inside (an interrupted create-env's bosh, an agent whose
  # launcher was killed) holds no port once the namespace is gone, but it
  # is ended all the same: the namespace is the harness's own.
  for pid in $(ip netns pids "$E2E_NETNS" 2>/dev/null); do
    kill -KILL "$pid" 2>/dev/null && log "ended pid $pid left in $E2E_NETNS"
  done
  ip netns delete "$E2E_NETNS" && log "removed network namespace $E2E_NETNS"
fi
rm -rf "$E2E_OUT"
log "removed $E2E_OUT"
