#!/usr/bin/env bash
# 50-vpc.sh: switch the environment to a VPC tier (make e2e-vpc), as seed
# 000's VPC phase does: a VPC ($E2E_VPC_NAME, $E2E_VPC_CIDR) on the
# Default VPC offering, a custom network ACL list ($E2E_VPC_ACL) letting
# in the agent's mbus port and ssh, and a tier ($E2E_VPC_TIER) on
# DefaultIsolatedNetworkOfferingForVpcNetworks with that list. The tier
# reuses the stock guest network's subnet, so the VM keeps its static IP
# and the namespace's lo still carries it. With $E2E_VPC_PROJECT set (as by
# default: bosh-e2e-vpc) everything is made inside that CloudStack
# project (created if missing), the CPI's key pair too, so the two phases
# cannot see each other's VMs, and
# 55-create-env-vpc.sh gives the CPI cloudstack.project. Records the names
# in $E2E_OUT/vpc.env for test.sh and 55-create-env-vpc.sh. Safe to re-run:
# what exists is reused.
set -euo pipefail
. "$(dirname "$0")/env.sh"

[ -s "$E2E_OUT/keys.env" ] && alive simulator ||
  die "the e2e environment is not up (no simulator recorded in $E2E_OUT): run make e2e-up first"
# A VPC's CIDR must be RFC 1918 (VpcManagerImpl.createVpc): the loopback
# network of E2E_NETNS=off cannot be a tier.
[ -n "$E2E_NS" ] || die "the VPC phase needs the network namespace (E2E_NETNS=on, as root): a VPC tier cannot be in 127.0.0.0/8"

# in_project ARGS...: ARGS, with the project's id when there is one.
project_id=
in_project() {
  if [ -n "$project_id" ]; then
    echo "$@" projectid="$project_id"
  else
    echo "$@"
  fi
}

if [ -n "$E2E_VPC_PROJECT" ]; then
  project_id=$(zone find_id listProjects ".name == \"$E2E_VPC_PROJECT\"" name="$E2E_VPC_PROJECT" listall=true)
  if [ -z "$project_id" ]; then
    project_id=$(zone cs createProject name="$E2E_VPC_PROJECT" displaytext="$E2E_VPC_PROJECT" | jq -r '.project.id')
    log "created project $E2E_VPC_PROJECT"
  fi
  # The CPI's key pair (cloudstack.default_key_name) must be the project's:
  # deployVirtualMachine looks key pairs up in the VM's owner, the project.
  if [ -z "$(zone find_id listSSHKeyPairs ".name == \"$KEYPAIR_NAME\"" name="$KEYPAIR_NAME" projectid="$project_id")" ]; then
    (umask 077 && zone cs createSSHKeyPair name="$KEYPAIR_NAME" projectid="$project_id" |
      jq -r '.keypair.privatekey' >"$E2E_OUT/vpc-$KEYPAIR_NAME.pem")
    log "created key pair $KEYPAIR_NAME in project $E2E_VPC_PROJECT; private key in $E2E_OUT/vpc-$KEYPAIR_NAME.pem"
  fi
fi

zone_id=$(zone find_id listZones ".name == \"$ZONE_NAME\"" name="$ZONE_NAME")
[ -n "$zone_id" ] || die "no zone $ZONE_NAME"
# shellcheck disable=SC2046 # in_project's words are the arguments
vpc_id=$(zone find_id listVPCs ".name == \"$E2E_VPC_NAME\"" $(in_project name="$E2E_VPC_NAME"))
if [ -z "$vpc_id" ]; then
  offering=$(zone find_id listVPCOfferings '.name == "Default VPC offering"' name="Default VPC offering")
  [ -n "$offering" ] || die "no VPC offering \"Default VPC offering\""
  # shellcheck disable=SC2046
  vpc_id=$(zone cs createVPC $(in_project name="$E2E_VPC_NAME" displaytext="$E2E_VPC_NAME" cidr="$E2E_VPC_CIDR" \
    vpcofferingid="$offering" zoneid="$zone_id") | jq -r '.vpc.id')
  log "created VPC $E2E_VPC_NAME ($E2E_VPC_CIDR)"
fi

acl_id=$(zone find_id listNetworkACLLists ".name == \"$E2E_VPC_ACL\"" vpcid="$vpc_id" name="$E2E_VPC_ACL")
if [ -z "$acl_id" ]; then
  acl_id=$(zone cs createNetworkACLList name="$E2E_VPC_ACL" description="the e2e VPC phase's tier" vpcid="$vpc_id" |
    jq -r '.networkacllist.id')
  # The custom list's rules: the agent's mbus (create-env talks to it) and
  # ssh, from anywhere; everything else the list's implicit deny refuses.
  for port in 6868 22; do
    zone cs createNetworkACL aclid="$acl_id" protocol=tcp startport="$port" endport="$port" traffictype=Ingress \
      action=Allow cidrlist=0.0.0.0/0 >/dev/null
  done
  log "created network ACL list $E2E_VPC_ACL (tcp 6868 and 22 in)"
fi

# shellcheck disable=SC2046
tier_id=$(zone find_id listNetworks ".name == \"$E2E_VPC_TIER\"" $(in_project vpcid="$vpc_id" name="$E2E_VPC_TIER"))
if [ -z "$tier_id" ]; then
  offering=$(zone find_id listNetworkOfferings ".name == \"$E2E_VPC_TIER_OFFERING\"" name="$E2E_VPC_TIER_OFFERING")
  [ -n "$offering" ] || die "no network offering $E2E_VPC_TIER_OFFERING"
  # shellcheck disable=SC2046
  tier_id=$(zone cs createNetwork $(in_project name="$E2E_VPC_TIER" displaytext="$E2E_VPC_TIER" zoneid="$zone_id" \
    networkofferingid="$offering" vpcid="$vpc_id" aclid="$acl_id" gateway="$E2E_GATEWAY" \
    netmask="$E2E_VPC_TIER_NETMASK") | jq -r '.network.id')
  log "created tier $E2E_VPC_TIER (${E2E_GUEST_CIDR%.*}.0/${E2E_GUEST_CIDR#*/}, gateway $E2E_GATEWAY) in VPC $E2E_VPC_NAME"
fi

umask 077
cat >"$E2E_OUT/vpc.env" <<EOF
E2E_VPC_ID=$vpc_id
E2E_VPC_TIER=$E2E_VPC_TIER
E2E_VPC_TIER_ID=$tier_id
E2E_VPC_ACL_ID=$acl_id
E2E_VPC_PROJECT=$E2E_VPC_PROJECT
E2E_VPC_PROJECT_ID=$project_id
EOF
log "the environment has VPC $E2E_VPC_NAME with tier $E2E_VPC_TIER: make test-e2e-vpc"
