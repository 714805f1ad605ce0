#!/usr/bin/env bash
# 55-create-env-vpc.sh [create-env|delete-env]: the VPC phase's `bosh
# create-env` (or delete-env): 40-create-env.sh's manifest and ops files
# with the VM on the tier 50-vpc.sh made ($E2E_OUT/vpc.env), its own state
# ($E2E_OUT/bosh-vpc-state.json) and vars store ($E2E_OUT/vpc-creds.yml);
# with a project there, vpc-project.yml gives the CPI cloudstack.project.
# Safe to re-run, as 40-create-env.sh is.
set -euo pipefail
. "$(dirname "$0")/env.sh"
. "$E2E_DIR/create-env.lib.sh"

action=$(bosh_env_action "${1:-}")
[ -s "$E2E_OUT/vpc.env" ] || die "no $E2E_OUT/vpc.env: run make e2e-vpc first"
. "$E2E_OUT/vpc.env"
bosh_env_prepare
[ -f "$E2E_CPI_OPS" ] || die "no ops file $E2E_CPI_OPS (manifests/cpi.yml)"

files=("$E2E_DIR/manifest.yml" -o "$E2E_CPI_OPS" -o "$E2E_DIR/ops.yml")
if [ -n "$E2E_VPC_PROJECT" ]; then
  files+=(-o "$E2E_DIR/vpc-project.yml" -v cloudstack_project="$E2E_VPC_PROJECT")
fi
CS_NETWORK=$E2E_VPC_TIER bosh_env_run "$action" vpc- "$E2E_OUT/bosh-vpc-state.json" "$E2E_OUT/vpc-creds.yml" \
  "${files[@]}" -v cloudstack_disk_offering="$E2E_DISK_OFFERING" -v e2e_disk_size="$E2E_DISK_SIZE"
