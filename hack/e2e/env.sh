# Tunables and helpers of the e2e harness; every script sources it. Override
# any tunable from the environment. Everything the harness makes goes to
# $E2E_OUT (git-ignored); down.sh removes it.
#
# By default everything (simulator, agent launcher, agents, bosh, the suite)
# runs inside the private network namespace $E2E_NETNS, whose lo carries
# 127.0.0.1 and the zone's guest network $E2E_GUEST_CIDR: no address outside
# the namespace is ever used. Making it needs root (ip netns).

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_ROOT=$(cd "$E2E_DIR/../.." && pwd)
: "${E2E_OUT:=$E2E_DIR/_out}"
: "${E2E_NETNS:=cloudstack-cpi-e2e}"
: "${E2E_GUEST_CIDR:=10.1.1.1/24}"        # put on the namespace's lo: the stock guest network
: "${E2E_SIM_LISTEN:=127.0.0.1:8080}"     # the simulator, inside the namespace
: "${E2E_JOB_LATENCY:=200ms}"             # how long the simulator's async jobs take
: "${E2E_READY_TIMEOUT:=30}"              # seconds each readiness stage may take
: "${E2E_CREATE_ENV_TIMEOUT:=900}"        # seconds a create-env or delete-env may take
: "${E2E_POLL_INTERVAL:=300ms}"           # how often the launcher lists VMs
: "${E2E_STATIC_IP:=10.1.1.10}"           # the VM's static IP on the guest network
: "${E2E_GATEWAY:=10.1.1.1}"
: "${E2E_COMPUTE_OFFERING:=Small Instance}"
: "${E2E_COMPUTE_OFFERING_UPDATE:=Medium Instance}"  # the update test's other VM size
: "${E2E_DISK_OFFERING:=shared.custom}"   # bosh-deployment's cloudstack ops file names it
: "${E2E_DISK_SIZE:=1024}"                # MiB, the persistent disk of create-env
: "${E2E_DISK_SIZE_UPDATE:=2048}"         # MiB, the disk size change test's
: "${E2E_STEMCELL:=$E2E_OUT/stemcell.tgz}"
: "${E2E_STEMCELL_VERSION:=0.0.1}"
: "${E2E_CPI_RELEASE:=$E2E_ROOT/bin/cloudstack-cpi-release.tgz}"
: "${E2E_CPI_OPS:=$E2E_ROOT/manifests/cpi.yml}" # the operators' ops file the manifest is built with
: "${E2E_BOSH:=$E2E_ROOT/bin/bosh}"
: "${E2E_AGENT:=$E2E_ROOT/bin/bosh-agent}"
: "${GO:=go}"
# The Go build cache the CPI package's packaging uses, on the host (create-env
# installing the CPI) and on the VM (the agent compiling the co-located job):
# one cache for both and for every create-env of a run. Point it outside
# $E2E_OUT to keep it warm across runs.
: "${E2E_GOCACHE:=$E2E_OUT/gocache}"
export CLOUDSTACK_CPI_GOCACHE=$E2E_GOCACHE

# The zone deploy scripts (hack/zone/) write their keys and key pair here.
: "${CLOUDSTACK_ENDPOINT:=http://$E2E_SIM_LISTEN/client/api}"
export ZONE_OUT="$E2E_OUT/zone"
export CLOUDSTACK_ENDPOINT
: "${ZONE_NAME:=Sandbox-simulator}"
: "${GUEST_NETWORK:=guest-network}"
: "${KEYPAIR_NAME:=bosh}"
export ZONE_NAME GUEST_NETWORK KEYPAIR_NAME

# Long-running processes record their pids here; down.sh stops them.
PIDS="$E2E_OUT/pids"

log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "$*"; exit 1; }

# in_ns CMD...: run CMD inside the namespace (or here when E2E_NETNS is empty
# and the caller is already inside one, e.g. the suite's own processes).
in_ns() {
  if [ -n "$E2E_NETNS" ]; then
    ip netns exec "$E2E_NETNS" "$@"
  else
    "$@"
  fi
}

# zone FUNCTION ARGS...: a helper of hack/zone/env.sh (cs, find_id, zone_id
# ...) run inside the namespace with the keys 01-keys.sh minted.
zone() {
  # shellcheck disable=SC2016
  in_ns bash -c '. "$0/hack/zone/env.sh"; "$@"' "$E2E_ROOT" "$@"
}

# alive NAME: the process recorded as NAME is running.
alive() {
  local pid
  pid=$(cat "$PIDS/$1" 2>/dev/null) || return 1
  kill -0 "$pid" 2>/dev/null
}

# start NAME LOG CMD...: start CMD in the namespace, in its own session, with
# its pid in $PIDS/NAME and its output in LOG.
start() {
  local name=$1 out=$2
  shift 2
  mkdir -p "$PIDS"
  if [ -n "$E2E_NETNS" ]; then
    setsid ip netns exec "$E2E_NETNS" "$@" >"$out" 2>&1 </dev/null &
  else
    setsid "$@" >"$out" 2>&1 </dev/null &
  fi
  echo $! >"$PIDS/$name"
}

# wait_for SECONDS WHAT CMD...: re-run CMD every 100 ms until it succeeds.
wait_for() {
  local secs=$1 what=$2
  local deadline=$((SECONDS + secs))
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || die "timed out after $secs s waiting for $what"
    sleep 0.1
  done
}

mkdir -p "$E2E_OUT"
