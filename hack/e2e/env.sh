# Tunables and helpers of the e2e harness; every script sources it. Override
# any tunable from the environment. Everything the harness makes goes to
# $E2E_OUT (git-ignored); down.sh removes it.
#
# E2E_NETNS chooses where everything (simulator, agent launcher, agents,
# bosh, the suite) runs:
#   on    inside the private network namespace $E2E_NETNS_NAME (needs root:
#         ip netns), whose lo carries 127.0.0.1 and the zone's stock guest
#         network $E2E_GUEST_CIDR (10.1.1.0/24); agents bind 0.0.0.0:6868.
#         No address outside the namespace is ever used.
#   off   on the host's loopback: the zone also gets a Shared guest network
#         in 127.0.0.0/8 (127.1.1.0/24, created by the admin), the VM's
#         static IP is in it and its agent binds that address only. No
#         address outside 127.0.0.0/8 is ever used.
#   auto  (default) on when 10-simulator-up.sh can make the namespace (root,
#         and `ip netns add` works), else off.
# 10-simulator-up.sh records its choice in $E2E_OUT/netns; under auto every
# later script (and down.sh) follows that record.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_ROOT=$(cd "$E2E_DIR/../.." && pwd)
. "$E2E_ROOT/hack/lib/simulator.sh"
: "${E2E_OUT:=$E2E_DIR/_out}"
: "${E2E_NETNS:=auto}"
: "${E2E_NETNS_NAME:=cloudstack-cpi-e2e}"
NETNS_RECORD=$E2E_OUT/netns

log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "$*"; exit 1; }

# make_netns: the namespace $E2E_NETNS_NAME exists, made now if need be.
make_netns() {
  [ "$(id -u)" -eq 0 ] || { log "making the network namespace $E2E_NETNS_NAME needs root"; return 1; }
  ip netns list 2>/dev/null | grep -qw "$E2E_NETNS_NAME" && return 0
  ip netns add "$E2E_NETNS_NAME" || return 1
  log "created network namespace $E2E_NETNS_NAME"
}

# E2E_NS: the namespace everything runs in, empty for the host. Under auto
# only a script that sets E2E_SETUP_NETNS (10-simulator-up.sh) tries to make
# one; the others follow the record, and without one run on the host.
case $E2E_NETNS in
  on) E2E_NS=$E2E_NETNS_NAME ;;
  off) E2E_NS= ;;
  auto)
    if [ -s "$NETNS_RECORD" ]; then
      E2E_NS=$(cat "$NETNS_RECORD")
    elif [ -n "${E2E_SETUP_NETNS:-}" ] && make_netns; then
      E2E_NS=$E2E_NETNS_NAME
    else
      [ -n "${E2E_SETUP_NETNS:-}" ] && log "no network namespace: falling back to host loopback (E2E_NETNS=off)"
      E2E_NS=
    fi
    ;;
  *) die "E2E_NETNS is '$E2E_NETNS': it must be on, off or auto" ;;
esac
[ "$E2E_NS" = off ] && E2E_NS=

# E2E_HYPERVISOR is what the simulated hosts run: XenServer (default),
# KVM or VMware. E2E_STEMCELL_KIND is the stemcell's shape: cloudstack (the
# CloudStack Xen stemcell, settings by user data; XenServer's default),
# openstack (bosh.io's OpenStack KVM stemcell, settings on the CPI's config
# drive ISO; KVM's default and, on XenServer, the XenServer/OpenStack
# phase's) or vsphere (bosh.io's vSphere stemcell, settings in env on the
# CPI's CD-ROM ISO; VMware's). 10-simulator-up.sh records both in $E2E_OUT;
# every later script follows the records, and a different value for a
# running environment is refused (make e2e-down first).
# follow_record FILE VAR: VAR takes the value FILE records for a running
# environment; a different one already set is refused.
follow_record() {
  [ -s "$1" ] || return 0
  local recorded
  recorded=$(cat "$1")
  [ -z "${!2:-}" ] || [ "${!2}" = "$recorded" ] ||
    die "the environment in $E2E_OUT has $2=$recorded, not ${!2}: make e2e-down first"
  printf -v "$2" %s "$recorded"
}
HYPERVISOR_RECORD=$E2E_OUT/hypervisor
KIND_RECORD=$E2E_OUT/stemcell-kind
follow_record "$HYPERVISOR_RECORD" E2E_HYPERVISOR
follow_record "$KIND_RECORD" E2E_STEMCELL_KIND
: "${E2E_HYPERVISOR:=XenServer}"
case $E2E_HYPERVISOR in
  XenServer) kinds='cloudstack openstack' ;;
  KVM) kinds=openstack ;;
  VMware) kinds=vsphere ;;
  *) die "E2E_HYPERVISOR is '$E2E_HYPERVISOR': it must be XenServer, KVM or VMware" ;;
esac
: "${E2E_STEMCELL_KIND:=${kinds%% *}}" # the first is the hosts' default
[[ " $kinds " == *" $E2E_STEMCELL_KIND "* ]] ||
  die "E2E_STEMCELL_KIND is '$E2E_STEMCELL_KIND': on $E2E_HYPERVISOR hosts it must be one of: $kinds"
case $E2E_STEMCELL_KIND in
  cloudstack) : "${E2E_STEMCELL:=$E2E_OUT/stemcell.tgz}" ;;
  openstack) : "${E2E_STEMCELL:=$E2E_OUT/stemcell-openstack-kvm.tgz}" ;;
  vsphere) : "${E2E_STEMCELL:=$E2E_OUT/stemcell-vsphere-esxi.tgz}" ;;
esac
export HYPERVISOR=$E2E_HYPERVISOR # the zone's clusters and hosts (hack/zone/)

# E2E_CLOUDSTACK_VERSION is the CloudStack release the simulator is: 4.22
# (default) or 4.20 (.ci/run runs the KVM phase on both). Recorded in
# $E2E_OUT/cloudstack-version like the hypervisor; the suite checks that
# listCapabilities names it.
VERSION_RECORD=$E2E_OUT/cloudstack-version
follow_record "$VERSION_RECORD" E2E_CLOUDSTACK_VERSION
: "${E2E_CLOUDSTACK_VERSION:=4.22}"
export E2E_CLOUDSTACK_VERSION

if [ -n "$E2E_NS" ]; then
  : "${E2E_GUEST_CIDR:=10.1.1.1/24}"      # put on the namespace's lo: the stock guest network
  : "${E2E_SIM_LISTEN:=127.0.0.1:8080}"   # the simulator, inside the namespace
  : "${E2E_STATIC_IP:=10.1.1.10}"         # the VM's static IP on the guest network
  : "${E2E_GATEWAY:=10.1.1.1}"
  : "${E2E_AGENT_MBUS_HOST:=0.0.0.0}"     # the address the agent's mbus binds
else
  # Host loopback: all of 127.0.0.0/8 is local, so the VM's address in the
  # Shared network is one its agent can listen on. The simulator listens on
  # the network's gateway (where a guest finds its virtual router's metadata
  # service), not on a port of 127.0.0.1 that other programs may hold.
  : "${E2E_GUEST_CIDR:=127.1.1.1/24}"
  : "${E2E_SIM_LISTEN:=127.1.1.1:8080}"
  : "${E2E_STATIC_IP:=127.1.1.10}"
  : "${E2E_GATEWAY:=127.1.1.1}"
  : "${E2E_AGENT_MBUS_HOST:=$E2E_STATIC_IP}" # the VM's own address: never 0.0.0.0 on the host
  # The Shared network hack/zone/12-shared-network.sh creates.
  : "${SHARED_NETWORK:=loopback-network}"
  : "${SHARED_NETWORK_GATEWAY:=$E2E_GATEWAY}"
  : "${SHARED_NETWORK_NETMASK:=255.255.255.0}"
  : "${SHARED_NETWORK_START:=${E2E_GATEWAY%.*}.2}"
  : "${SHARED_NETWORK_END:=${E2E_GATEWAY%.*}.254}"
  export SHARED_NETWORK SHARED_NETWORK_GATEWAY SHARED_NETWORK_NETMASK SHARED_NETWORK_START SHARED_NETWORK_END
  # Loopback is never a proxy's business (curl and Go read CIDRs here).
  export NO_PROXY="${NO_PROXY:+$NO_PROXY,}127.0.0.0/8" no_proxy="${no_proxy:+$no_proxy,}127.0.0.0/8"
fi
: "${E2E_JOB_LATENCY:=200ms}"             # how long the simulator's async jobs take
: "${E2E_READY_TIMEOUT:=30}"              # seconds each readiness stage may take
: "${E2E_CREATE_ENV_TIMEOUT:=900}"        # seconds a create-env or delete-env may take
: "${E2E_POLL_INTERVAL:=300ms}"           # how often the launcher lists VMs
: "${E2E_COMPUTE_OFFERING:=Small Instance}"
: "${E2E_COMPUTE_OFFERING_UPDATE:=Medium Instance}"  # the update test's other VM size
: "${E2E_DISK_OFFERING:=shared.custom}"   # bosh-deployment's cloudstack ops file names it
: "${E2E_DISK_SIZE:=1024}"                # MiB, the persistent disk of create-env
: "${E2E_DISK_SIZE_UPDATE:=2048}"         # MiB, the disk size change test's
: "${E2E_STEMCELL_VERSION:=0.0.1}"
# The VPC phase (50-vpc.sh, make e2e-vpc): its VPC, network ACL list and
# tier, whose subnet is the stock guest network's. E2E_VPC_PROJECT names
# the CloudStack project everything of the phase is made in and the CPI is
# given (cloudstack.project), so the two phases cannot see each other's
# VMs; set it empty for a VPC phase outside any project.
: "${E2E_VPC_NAME:=e2e-vpc}"
: "${E2E_VPC_CIDR:=10.1.0.0/16}"
: "${E2E_VPC_ACL:=e2e-vpc-acl}"
: "${E2E_VPC_TIER:=e2e-vpc-tier}"
: "${E2E_VPC_TIER_NETMASK:=255.255.255.0}"
: "${E2E_VPC_TIER_OFFERING:=DefaultIsolatedNetworkOfferingForVpcNetworks}"
: "${E2E_VPC_PROJECT=bosh-e2e-vpc}"
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
# The network the VM goes to: the stock guest network in the namespace, the
# loopback Shared network on the host.
E2E_NETWORK=${SHARED_NETWORK:-$GUEST_NETWORK}

# Long-running processes record their pids here; down.sh stops them.
PIDS="$E2E_OUT/pids"

# in_ns CMD...: run CMD inside the namespace, or here on the host.
in_ns() {
  if [ -n "$E2E_NS" ]; then
    ip netns exec "$E2E_NS" "$@"
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

# start NAME LOG CMD...: start CMD in the namespace (or on the host), in its
# own session, with its pid in $PIDS/NAME and its output in LOG.
start() {
  local name=$1 out=$2
  shift 2
  mkdir -p "$PIDS"
  if [ -n "$E2E_NS" ]; then
    set -- ip netns exec "$E2E_NS" "$@"
  fi
  daemon_start "$out" setsid "$@"
  echo "$DAEMON_PID" >"$PIDS/$name"
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
