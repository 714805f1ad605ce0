#!/usr/bin/env bash
# 40-create-env.sh [create-env|delete-env]: `bosh create-env` (or delete-env)
# of manifest.yml with the operators' ops file manifests/cpi.yml and this
# harness's ops.yml (create-env.lib.sh: the checks, the test release, the
# run under a timeout in the namespace, if any). bosh keeps its state
# ($E2E_OUT/bosh-state.json), its generated variables ($E2E_OUT/creds.yml)
# and its HOME in $E2E_OUT. Safe to re-run: a second create-env with an
# unchanged manifest changes nothing.
#
# The disk size comes from E2E_DISK_SIZE, the disk offering from
# E2E_DISK_OFFERING; the rest as create-env.lib.sh says. E2E_OPS names more
# ops files to apply last.
set -euo pipefail
. "$(dirname "$0")/env.sh"
. "$E2E_DIR/create-env.lib.sh"

action=$(bosh_env_action "${1:-}")
bosh_env_prepare
[ -f "$E2E_CPI_OPS" ] || die "no ops file $E2E_CPI_OPS (manifests/cpi.yml)"

files=("$E2E_DIR/manifest.yml" -o "$E2E_CPI_OPS" -o "$E2E_DIR/ops.yml")
for ops in ${E2E_OPS:-}; do files+=(-o "$ops"); done
bosh_env_run "$action" "" "$E2E_OUT/bosh-state.json" "$E2E_OUT/creds.yml" "${files[@]}" \
  -v cloudstack_disk_offering="$E2E_DISK_OFFERING" -v e2e_disk_size="$E2E_DISK_SIZE"
