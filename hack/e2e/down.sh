#!/usr/bin/env bash
# down.sh: stop everything the harness started (by the pids it recorded:
# the launcher first, which takes its agents down with it, then the
# simulator), end anything else of its own still running, remove the network
# namespace (if it made one) and $E2E_OUT. Safe after a failed
# or interrupted up.sh, and when nothing is up.
set -uo pipefail
unset E2E_HYPERVISOR E2E_STEMCELL_KIND # whatever the environment runs (its records), it comes down
. "$(dirname "$0")/env.sh"

stop() {
  local name=$1 pid
  pid=$(cat "$PIDS/$name" 2>/dev/null) || return 0
  if kill -0 "$pid" 2>/dev/null; then
    daemon_stop "$pid" 5
    log "stopped $name (pid $pid)"
  fi
  rm -f "$PIDS/$name"
}
stop launcher
stop simulator

# Anything of this harness's still running (an interrupted create-env's
# bosh and its CPI, an agent whose launcher was killed, the suite): a
# binary under $E2E_OUT, or the bosh CLI or bosh-agent working on it.
leftovers() {
  local p exe bosh agent
  bosh=$(readlink -f "$E2E_BOSH" 2>/dev/null) agent=$(readlink -f "$E2E_AGENT" 2>/dev/null)
  for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    case $exe in
      "$E2E_OUT"/*) ;;
      "$bosh" | "$agent") tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF "$E2E_OUT/" || continue ;;
      *) continue ;;
    esac
    echo "${p#/proc/}"
  done
}
for pid in $(leftovers); do
  kill -KILL "$pid" 2>/dev/null && log "ended pid $pid left from the harness"
done

# The namespace: the one recorded, or under E2E_NETNS=on or auto the one by
# that name (an up.sh interrupted before its record).
ns=$E2E_NS
[ -n "$ns" ] || [ "$E2E_NETNS" = off ] || ns=$E2E_NETNS_NAME
if [ -n "$ns" ] && ip netns list 2>/dev/null | grep -qw "$ns"; then
  # Anything still inside holds no port once the namespace is gone, but it
  # is ended all the same: the namespace is the harness's own.
  for pid in $(ip netns pids "$ns" 2>/dev/null); do
    kill -KILL "$pid" 2>/dev/null && log "ended pid $pid left in $ns"
  done
  ip netns delete "$ns" && log "removed network namespace $ns"
fi
rm -rf "$E2E_OUT"
log "removed $E2E_OUT"
