#!/usr/bin/env bash
# 40-create-env.sh [create-env|delete-env]: the test release (hack/e2e/release)
# built into $E2E_OUT, and `bosh create-env` (or delete-env) of manifest.yml
# with the operators' ops file manifests/cpi.yml and this harness's
# ops.yml, inside the namespace (if any) and under a timeout (an agent that never
# answers would keep bosh waiting ten minutes). bosh keeps its state, its
# generated variables and its HOME in $E2E_OUT. Safe to re-run: a second
# create-env with an unchanged manifest changes nothing.
#
# The VM size and disk size come from E2E_COMPUTE_OFFERING and E2E_DISK_SIZE,
# the API from CS_API_URL, CS_API_KEY, CS_SECRET_KEY (default: $E2E_OUT/keys.env),
# zone, network and key pair from CS_ZONE, CS_NETWORK, CS_KEY_PAIR (default:
# the names hack/zone/ deploys), the address the agent's mbus binds from
# E2E_AGENT_MBUS_HOST (env.sh: 0.0.0.0 in the namespace, the VM's IP on the
# host).
set -euo pipefail
. "$(dirname "$0")/env.sh"

action=${1:-create-env}
case $action in create-env | delete-env) ;; *) die "usage: $0 [create-env|delete-env]" ;; esac
if [ -z "${CS_API_KEY:-}" ]; then
  [ -s "$E2E_OUT/keys.env" ] || die "no CS_API_KEY and no $E2E_OUT/keys.env: run 10-simulator-up.sh"
  set -a
  . "$E2E_OUT/keys.env"
  set +a
fi
# The harness's simulator, when it started one, must still be running: bosh
# would otherwise fail call by call, or wait for an agent that never comes.
if [ -s "$PIDS/simulator" ] && ! alive simulator; then
  die "the simulator (pid $(cat "$PIDS/simulator")) is not running: make e2e-down, then make e2e-up"
fi
[ -x "$E2E_BOSH" ] || die "no bosh CLI at $E2E_BOSH: run 20-release.sh"
[ -s "$E2E_CPI_RELEASE" ] || die "no CPI release at $E2E_CPI_RELEASE: run 20-release.sh"
[ -s "$E2E_STEMCELL" ] || die "no stemcell at $E2E_STEMCELL: run 30-stemcell.sh"
[ -f "$E2E_CPI_OPS" ] || die "no ops file $E2E_CPI_OPS (manifests/cpi.yml)"

export HOME=$E2E_OUT/home # bosh's ~/.bosh (installations, caches) stays in $E2E_OUT
mkdir -p "$HOME"

# The test release, built from a copy: create-release writes dev_releases/
# and .dev_builds/ into the release directory.
release=$E2E_OUT/cpi-e2e-release.tgz
if [ ! -s "$release" ]; then
  rm -rf "$E2E_OUT/release-src"
  cp -r "$E2E_DIR/release" "$E2E_OUT/release-src"
  (cd "$E2E_OUT/release-src" && "$E2E_BOSH" --tty -n create-release --force --tarball "$release" >"$E2E_OUT/create-release.log" 2>&1) ||
    die "building the test release failed: see $E2E_OUT/create-release.log"
  rm -rf "$E2E_OUT/release-src"
fi

args=(
  "$E2E_DIR/manifest.yml" -o "$E2E_CPI_OPS" -o "$E2E_DIR/ops.yml"
  --state "$E2E_OUT/bosh-state.json" --vars-store "$E2E_OUT/creds.yml"
  -v e2e_release="$release" -v cloudstack_cpi_release_url="file://$E2E_CPI_RELEASE"
  -v stemcell_url="file://$E2E_STEMCELL" -v stemcell_sha1="$(sha1sum "$E2E_STEMCELL" | cut -d' ' -f1)"
  -v internal_ip="$E2E_STATIC_IP" -v internal_gw="$E2E_GATEWAY" -v internal_cidr="${E2E_GUEST_CIDR%.*}.0/${E2E_GUEST_CIDR#*/}"
  -v network_name="${CS_NETWORK:-$E2E_NETWORK}" -v cloudstack_zone="${CS_ZONE:-$ZONE_NAME}"
  -v cloudstack_endpoint="$CS_API_URL" -v cloudstack_api_key="$CS_API_KEY"
  -v cloudstack_secret_access_key="$CS_SECRET_KEY" -v cloudstack_default_key_name="${CS_KEY_PAIR:-$KEYPAIR_NAME}"
  -v cloudstack_compute_offering="$E2E_COMPUTE_OFFERING" -v cloudstack_disk_offering="$E2E_DISK_OFFERING"
  -v agent_mbus_host="$E2E_AGENT_MBUS_HOST" -v e2e_disk_size="$E2E_DISK_SIZE" -v e2e_greeting="${E2E_GREETING:-hello from the e2e suite}"
)
for ops in ${E2E_OPS:-}; do args+=(-o "$ops"); done

# The interpolated manifest, for the suite and for people (it holds keys).
umask 077
in_ns env HOME="$HOME" "$E2E_BOSH" int "${args[@]::5}" "${args[@]:7}" >"$E2E_OUT/manifest.yml"

log "bosh $action (log in $E2E_OUT/$action.log)"
start_s=$SECONDS
if ! in_ns timeout "$E2E_CREATE_ENV_TIMEOUT" "$E2E_BOSH" --tty -n "$action" "${args[@]}" >"$E2E_OUT/$action.log" 2>&1; then
  tail -n 30 "$E2E_OUT/$action.log" >&2
  die "bosh $action failed after $((SECONDS - start_s)) s: see $E2E_OUT/$action.log"
fi
log "bosh $action succeeded in $((SECONDS - start_s)) s"
