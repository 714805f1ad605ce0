#!/usr/bin/env bash
# 45-create-env-bosh-deployment.sh [create-env|delete-env]: `bosh create-env`
# (or delete-env) of bosh-deployment's own bosh.yml and cloudstack/cpi.yml,
# read unmodified where the tests find them (internal/fixtures:
# $BOSH_DEPLOYMENT_FIXTURES, else shared/fixtures/bosh-deployment beside the
# repository, else the cache `make fixtures` fills), with
# bosh-deployment-ops.yml after them: an
# operator's move from the Go CPI, whose manifest changes by its release
# lines only (plus, here, the test release instead of the director's). On
# host loopback bosh-deployment-mbus.yml also moves create-env's agent mbus
# off 0.0.0.0.
#
# Its own state ($E2E_OUT/bosh-deployment-state.json) and vars store
# ($E2E_OUT/bosh-deployment-creds.yml): a separate environment from
# 40-create-env.sh's, on the same static IP, so only one of the two may be
# deployed at a time (the suite deletes the other first). Variables as
# create-env.lib.sh says; director_name is E2E_DIRECTOR_NAME (bosh).
set -euo pipefail
. "$(dirname "$0")/env.sh"
. "$E2E_DIR/create-env.lib.sh"

# bosh_deployment_dir: where bosh.yml and cloudstack/cpi.yml are, by the
# tests' own lookup (its error says where it looked and how to get them).
bosh_deployment_dir() {
  (cd "$E2E_ROOT" && "$GO" run ./internal/fixtures/boshdeployment dir) ||
    die "bosh-deployment's manifests not found (make fixtures, or set BOSH_DEPLOYMENT_FIXTURES)"
}

action=$(bosh_env_action "${1:-}")
bosh_env_prepare
fixtures=$(bosh_deployment_dir)
for f in bosh.yml cloudstack/cpi.yml; do
  [ -f "$fixtures/$f" ] || die "no $fixtures/$f"
done

files=("$fixtures/bosh.yml" -o "$fixtures/cloudstack/cpi.yml" -o "$E2E_DIR/bosh-deployment-ops.yml")
[ "$E2E_AGENT_MBUS_HOST" = 0.0.0.0 ] || files+=(-o "$E2E_DIR/bosh-deployment-mbus.yml")
bosh_env_run "$action" bosh-deployment- "$E2E_OUT/bosh-deployment-state.json" "$E2E_OUT/bosh-deployment-creds.yml" \
  "${files[@]}" -v director_name="${E2E_DIRECTOR_NAME:-bosh}"
