# Tunables and helpers of the zone deploy scripts; every script sources it.
# Override any tunable from the environment. The defaults deploy marvin's
# setup/dev/advanced.cfg zone, the one the CloudStack simulator is seeded
# with, plus the offerings, guest network and key pair a BOSH director needs.
#
# The scripts drive Debian's `cloudstack` CLI (package cs), which signs with
# API keys only: 01-keys.sh mints them through a login session and writes
# $ZONE_OUT/keys.env, which the later scripts read unless
# CLOUDSTACK_KEY/CLOUDSTACK_SECRET are set already.

: "${CLOUDSTACK_ENDPOINT:=http://127.0.0.1:8080/client/api}"
: "${CS_ADMIN_USER:=admin}"          # the root admin 01-keys.sh logs in as
: "${CS_ADMIN_PASSWORD:=password}"
: "${CS_ADMIN_DOMAIN:=/}"
: "${ZONE_OUT:=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/_out}"

: "${ZONE_NAME:=Sandbox-simulator}"
: "${ZONE_DNS:=10.147.28.6}"             # dns1 and internaldns1
: "${GUEST_CIDR:=10.1.1.0/24}"           # the zone's guest CIDR (RFC 1918/6598)
: "${HYPERVISOR:=XenServer}"             # Simulator for apache/cloudstack-simulator; our simulator's -hypervisor
: "${PHYSICAL_NETWORK:=Sandbox-pnet}"
: "${GUEST_VLANS:=100-200}"              # the physical network's guest VLAN range
: "${POD_NAME:=POD0}"
: "${POD_GATEWAY:=172.16.15.1}"
: "${POD_NETMASK:=255.255.255.0}"
: "${POD_START:=172.16.15.2}"
: "${POD_END:=172.16.15.200}"
# Clusters as NAME|HOSTS|POOLS separated by spaces, hosts (their URLs) and
# pools comma-separated; pools are created as $STORAGE_URL/<pool lowercased>.
# The default is the simulator's seeded zone: advanced.cfg's clusters with
# 7 and 6 hosts (room for 208 Small Instance VMs) where advanced.cfg has 2 and 1.
: "${CLUSTERS:=C0|http://sim/c0/h0,http://sim/c0/h1,http://sim/c0/h2,http://sim/c0/h3,http://sim/c0/h4,http://sim/c0/h5,http://sim/c0/h6|PS0,PS1 C1|http://sim/c1/h0,http://sim/c1/h1,http://sim/c1/h2,http://sim/c1/h3,http://sim/c1/h4,http://sim/c1/h5|PS2}"
: "${HOST_USERNAME:=root}"
: "${HOST_PASSWORD:=password}"
: "${STORAGE_URL:=nfs://10.147.28.6:/export/home/sandbox}"
: "${SECONDARY_URL:=nfs://10.147.28.6:/export/home/sandbox/secondary}"
: "${PUBLIC_VLAN:=50}"
: "${PUBLIC_GATEWAY:=192.168.2.1}"
: "${PUBLIC_NETMASK:=255.255.255.0}"
: "${PUBLIC_START:=192.168.2.2}"
: "${PUBLIC_END:=192.168.2.200}"
: "${NETWORK_OFFERING:=DefaultIsolatedNetworkOfferingWithSourceNatService}"
: "${VPC_TIER_OFFERING:=DefaultIsolatedNetworkOfferingForVpcNetworks}"
: "${GUEST_NETWORK:=guest-network}"
: "${GUEST_NETWORK_GATEWAY:=}"           # empty: the zone's guest CIDR
: "${GUEST_NETWORK_NETMASK:=}"
# A Shared guest network the admin creates (12-shared-network.sh) when
# SHARED_NETWORK names one: an admin's Shared network may use any range, e.g.
# one in 127.0.0.0/8 for agents listening on the host's loopback.
: "${SHARED_NETWORK:=}"
: "${SHARED_NETWORK_OFFERING:=DefaultSharedNetworkOffering}"
: "${SHARED_NETWORK_GATEWAY:=}"
: "${SHARED_NETWORK_NETMASK:=}"
: "${SHARED_NETWORK_START:=}"          # the range guests get addresses from
: "${SHARED_NETWORK_END:=}"
: "${SHARED_NETWORK_VLAN:=untagged}"
: "${KEYPAIR_NAME:=bosh}"
: "${KEYPAIR_PUBLIC_KEY:=}"              # empty: createSSHKeyPair, private key in $ZONE_OUT

export CLOUDSTACK_ENDPOINT

if [ -z "${CLOUDSTACK_KEY:-}" ] && [ -f "$ZONE_OUT/keys.env" ]; then
  # shellcheck disable=SC1091
  . "$ZONE_OUT/keys.env"
fi
export CLOUDSTACK_KEY CLOUDSTACK_SECRET

log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "$*"; exit 1; }

# cs COMMAND [key=value ...] runs one API command with the CLI (waiting for
# async jobs) and prints the answer's JSON. It fails with CloudStack's error.
cs() {
  [ -n "${CLOUDSTACK_KEY:-}" ] || die "no API keys: run 01-keys.sh or set CLOUDSTACK_KEY/CLOUDSTACK_SECRET"
  local out
  # A private HOME and working directory: no cloudstack.ini interferes.
  if ! out=$(cd "$ZONE_OUT" && HOME="$ZONE_OUT" cloudstack --quiet --post "$@" 2>&1); then
    die "$1 failed: $out"
  fi
  printf '%s\n' "$out"
}

# find_id COMMAND FILTER [key=value ...]: the id of the first entity the
# list command returns that the jq FILTER selects, or nothing.
find_id() {
  local cmd=$1 filter=$2
  shift 2
  cs "$cmd" "$@" | jq -r "[.[]? | arrays | .[] | select($filter)][0].id // empty"
}

zone_id() {
  local id
  id=$(find_id listZones ".name == \"$ZONE_NAME\"" name="$ZONE_NAME")
  [ -n "$id" ] || die "zone $ZONE_NAME does not exist: run 02-zone.sh"
  printf '%s\n' "$id"
}

physical_network_id() {
  local id
  id=$(find_id listPhysicalNetworks ".name == \"$PHYSICAL_NETWORK\"" zoneid="$(zone_id)")
  [ -n "$id" ] || die "physical network $PHYSICAL_NETWORK does not exist: run 03-physical-network.sh"
  printf '%s\n' "$id"
}

pod_id() {
  local id
  id=$(find_id listPods ".name == \"$POD_NAME\"" zoneid="$(zone_id)" name="$POD_NAME")
  [ -n "$id" ] || die "pod $POD_NAME does not exist: run 04-pod.sh"
  printf '%s\n' "$id"
}

mkdir -p "$ZONE_OUT"
