#!/usr/bin/env bash
# 10-simulator-up.sh: the private network namespace (E2E_NETNS, see env.sh:
# without one, host loopback and a Shared network in 127.0.0.0/8), the simulator in it
# (started with -empty: a fresh CloudStack with only the root admin), and the
# zone deployed through the API with the cloudstack CLI (hack/zone/), plus
# the offerings bosh-deployment's cloudstack ops file names. Readiness is
# checked in stages: the simulator announces its address, the admin can log
# in, the zone is deployed. The hosts run E2E_HYPERVISOR (env.sh). API keys are minted into $E2E_OUT/keys.env as a harness does on a
# real CloudStack (hack/zone/01-keys.sh). Safe to re-run.
set -euo pipefail
E2E_SETUP_NETNS=1 # under E2E_NETNS=auto, env.sh tries to make the namespace
. "$(dirname "$0")/env.sh"

command -v cloudstack >/dev/null || die "the cloudstack CLI is missing: make test-deps"

if [ -n "$E2E_NS" ]; then
  make_netns || die "no network namespace $E2E_NS (E2E_NETNS=on): run as root, or set E2E_NETNS=auto or off"
  in_ns ip link set lo up
  in_ns ip -4 addr show dev lo | grep -qF " ${E2E_GUEST_CIDR} " || in_ns ip addr add "$E2E_GUEST_CIDR" dev lo
  echo "$E2E_NS" >"$NETNS_RECORD"
else
  echo off >"$NETNS_RECORD"
  log "running on host loopback: the VM goes to the Shared network $SHARED_NETWORK (${E2E_GUEST_CIDR})"
fi

sim=$E2E_OUT/cloudstack-simulator
if ! alive simulator; then
  # Another program on the address (on host loopback: another harness's
  # simulator) would answer for ours and get our zone.
  ! in_ns curl -sS -o /dev/null --max-time 2 "http://$E2E_SIM_LISTEN/" 2>/dev/null ||
    die "something else listens on $E2E_SIM_LISTEN: stop it or set E2E_SIM_LISTEN"
  (cd "$E2E_ROOT" && $GO build -o "$sim" ./simulator/cmd/cloudstack-simulator)
  start simulator "$E2E_OUT/simulator.log" "$sim" -listen "$E2E_SIM_LISTEN" -empty -state "$E2E_OUT/simulator.json" \
    -job-latency "$E2E_JOB_LATENCY" -allow-loopback-urls -upload-monitoring-interval 1s -hypervisor "$E2E_HYPERVISOR" \
    -cloudstack-version "$E2E_CLOUDSTACK_VERSION"
  echo "$E2E_HYPERVISOR" >"$HYPERVISOR_RECORD"
  echo "$E2E_STEMCELL_KIND" >"$KIND_RECORD"
  echo "$E2E_CLOUDSTACK_VERSION" >"$VERSION_RECORD"
  log "started the simulator (pid $(cat "$PIDS/simulator")), log in $E2E_OUT/simulator.log"
fi

# Stage 1: it announced its address, so it accepts connections.
simulator_endpoint "$E2E_OUT/simulator.log" "$(cat "$PIDS/simulator")" "$E2E_READY_TIMEOUT" >/dev/null ||
  die "the simulator is not listening on $E2E_SIM_LISTEN"
# Stage 2: the API accepts the admin's credentials.
login() {
  in_ns curl -sS --data-urlencode command=login --data-urlencode username=admin --data-urlencode password=password \
    --data-urlencode domain=/ --data-urlencode response=json "$CLOUDSTACK_ENDPOINT" | jq -e '.loginresponse.sessionkey'
}
wait_for "$E2E_READY_TIMEOUT" "the simulator to accept the admin's login" login

# Stage 3: the zone, deployed through the API as on a fresh CloudStack.
in_ns bash "$E2E_ROOT/hack/zone/deploy.sh"

# The offerings bosh-deployment's cloudstack/cpi.yml names: the customized
# disk offering shared.custom (persistent and ephemeral disks).
if [ -z "$(zone find_id listDiskOfferings ".name == \"$E2E_DISK_OFFERING\"" name="$E2E_DISK_OFFERING")" ]; then
  zone cs createDiskOffering name="$E2E_DISK_OFFERING" displaytext="$E2E_DISK_OFFERING" customized=true >/dev/null
  log "created disk offering $E2E_DISK_OFFERING"
fi
zone_uuid=$(zone zone_id)
[ "$(zone cs listZones id="$zone_uuid" | jq -r '.zone[0].allocationstate')" = Enabled ] ||
  die "zone $ZONE_NAME is not enabled"

. "$ZONE_OUT/keys.env"
umask 077
cat >"$E2E_OUT/keys.env" <<KEYS
CS_API_URL=$CLOUDSTACK_ENDPOINT
CS_API_KEY=$CLOUDSTACK_KEY
CS_SECRET_KEY=$CLOUDSTACK_SECRET
KEYS
log "zone $ZONE_NAME ($E2E_HYPERVISOR, CloudStack $E2E_CLOUDSTACK_VERSION) is up; API keys in $E2E_OUT/keys.env"
