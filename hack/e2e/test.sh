#!/usr/bin/env bash
# test.sh [go test flags]: the e2e suite (build tag e2e, package e2e/)
# against the environment up.sh made, with its variables set from $E2E_OUT:
# with the CloudStack stemcell on XenServer hosts every test but the
# phases', else the phase of the hosts and stemcell: TestKVMCreateEnv (make
# e2e-kvm), TestXenOpenStackCreateEnv (make e2e-xen-openstack) or
# TestVMwareCreateEnv (make e2e-vmware), with bosh-agent's device path
# resolver (tools/devicepaths) built for them; with E2E_PHASE=vpc
# (make test-e2e-vpc, after make e2e-vpc) the VPC phase's TestVPCCreateEnv
# on the tier 50-vpc.sh recorded.
# The suite runs inside the namespace (if any), where the simulator and the agents
# are; it stops with a message when the environment is not up.
set -euo pipefail
. "$(dirname "$0")/env.sh"

if [ ! -s "$E2E_OUT/keys.env" ] || ! alive simulator || ! alive launcher; then
  die "the e2e environment is not up (no simulator or launcher recorded in $E2E_OUT): run make e2e-up first"
fi
set -a
. "$E2E_OUT/keys.env"
CS_ZONE=$ZONE_NAME
CS_NETWORK=$E2E_NETWORK
CS_COMPUTE_OFFERING=$E2E_COMPUTE_OFFERING
CS_COMPUTE_OFFERING_UPDATE=$E2E_COMPUTE_OFFERING_UPDATE
CS_DISK_OFFERING=$E2E_DISK_OFFERING
CS_KEY_PAIR=$KEYPAIR_NAME
E2E_CREATE_ENV=$E2E_DIR/40-create-env.sh
E2E_BOSH_STATE=$E2E_OUT/bosh-state.json
E2E_CREDS=$E2E_OUT/creds.yml
E2E_BOSH_DEPLOYMENT_CREATE_ENV=$E2E_DIR/45-create-env-bosh-deployment.sh
E2E_BOSH_DEPLOYMENT_STATE=$E2E_OUT/bosh-deployment-state.json
E2E_BOSH_DEPLOYMENT_CREDS=$E2E_OUT/bosh-deployment-creds.yml
E2E_AGENT_DIR=$E2E_OUT/agents
E2E_VPC_CREATE_ENV=$E2E_DIR/55-create-env-vpc.sh
E2E_VPC_STATE=$E2E_OUT/bosh-vpc-state.json
E2E_VPC_CREDS=$E2E_OUT/vpc-creds.yml
set +a
export E2E_STEMCELL E2E_STATIC_IP E2E_BOSH E2E_DISK_SIZE E2E_DISK_SIZE_UPDATE
(cd "$E2E_ROOT" && $GO test -c -tags e2e -o "$E2E_OUT/e2e.test" ./e2e)
if [ "${E2E_PHASE:-}" = vpc ]; then
  [ -s "$E2E_OUT/vpc.env" ] || die "no $E2E_OUT/vpc.env: run make e2e-vpc first"
  set -a
  . "$E2E_OUT/vpc.env"
  CS_NETWORK=$E2E_VPC_TIER
  set +a
  tests=(-test.run '^TestVPC')
else
  case $E2E_HYPERVISOR/$E2E_STEMCELL_KIND in
    KVM/openstack) phase=TestKVMCreateEnv ;;
    XenServer/openstack) phase=TestXenOpenStackCreateEnv ;;
    VMware/vsphere) phase=TestVMwareCreateEnv ;;
    *) phase= ;;
  esac
  if [ -n "$phase" ]; then
    (cd "$E2E_ROOT/tools" && $GO build -o "$E2E_OUT/devicepaths" ./devicepaths)
    export E2E_DEVICEPATHS=$E2E_OUT/devicepaths
    tests=(-test.run "^$phase\$")
  else
    tests=(-test.skip '^(TestKVM|TestXenOpenStack|TestVMware|TestVPC)')
  fi
fi
cd "$E2E_ROOT/e2e"
in_ns "$E2E_OUT/e2e.test" -test.v -test.count=1 -test.timeout 60m "${tests[@]}" "$@"
