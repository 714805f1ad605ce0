# create-env.lib.sh: what the create-env scripts (40-, 45-) share, sourced
# after env.sh: the checks that the environment is there, the test release
# (hack/e2e/release) and one `bosh create-env` (or delete-env) run inside the
# namespace (if any) under a timeout (an agent that never answers would keep
# bosh waiting ten minutes), with bosh's HOME in $E2E_OUT.
#
# The API comes from CS_API_URL, CS_API_KEY, CS_SECRET_KEY (default:
# $E2E_OUT/keys.env); zone, network and key pair from CS_ZONE, CS_NETWORK,
# CS_KEY_PAIR (default: the names hack/zone/ deploys); the VM size from
# E2E_COMPUTE_OFFERING; the address the agent's mbus binds from
# E2E_AGENT_MBUS_HOST (env.sh: 0.0.0.0 in the namespace, the VM's IP on the
# host).

# bosh_env_action ACTION: ACTION if it is create-env or delete-env.
bosh_env_action() {
  case ${1:-create-env} in
    create-env | delete-env) echo "${1:-create-env}" ;;
    *) die "usage: $0 [create-env|delete-env]" ;;
  esac
}

# bosh_env_prepare: the keys, the tools, the CPI release and the stemcell
# are there and the harness's simulator runs; the test release is built
# into $E2E_TEST_RELEASE.
bosh_env_prepare() {
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

  export HOME=$E2E_OUT/home # bosh's ~/.bosh (installations, caches) stays in $E2E_OUT
  mkdir -p "$HOME"

  # Built from a copy: create-release writes dev_releases/ and .dev_builds/
  # into the release directory.
  E2E_TEST_RELEASE=$E2E_OUT/cpi-e2e-release.tgz
  if [ ! -s "$E2E_TEST_RELEASE" ]; then
    rm -rf "$E2E_OUT/release-src"
    cp -r "$E2E_DIR/release" "$E2E_OUT/release-src"
    (cd "$E2E_OUT/release-src" &&
      "$E2E_BOSH" --tty -n create-release --force --tarball "$E2E_TEST_RELEASE" >"$E2E_OUT/create-release.log" 2>&1) ||
      die "building the test release failed: see $E2E_OUT/create-release.log"
    rm -rf "$E2E_OUT/release-src"
  fi
}

# bosh_env_vars: the -v arguments both manifests take from the harness.
bosh_env_vars() {
  BOSH_ENV_VARS=(
    -v e2e_release="$E2E_TEST_RELEASE" -v cloudstack_cpi_release_url="file://$E2E_CPI_RELEASE"
    -v stemcell_url="file://$E2E_STEMCELL" -v stemcell_sha1="$(sha1sum "$E2E_STEMCELL" | cut -d' ' -f1)"
    -v internal_ip="$E2E_STATIC_IP" -v internal_gw="$E2E_GATEWAY" -v internal_cidr="${E2E_GUEST_CIDR%.*}.0/${E2E_GUEST_CIDR#*/}"
    -v network_name="${CS_NETWORK:-$E2E_NETWORK}" -v cloudstack_zone="${CS_ZONE:-$ZONE_NAME}"
    -v cloudstack_endpoint="$CS_API_URL" -v cloudstack_api_key="$CS_API_KEY"
    -v cloudstack_secret_access_key="$CS_SECRET_KEY" -v cloudstack_default_key_name="${CS_KEY_PAIR:-$KEYPAIR_NAME}"
    -v cloudstack_compute_offering="$E2E_COMPUTE_OFFERING"
    -v agent_mbus_host="$E2E_AGENT_MBUS_HOST" -v e2e_greeting="${E2E_GREETING:-hello from the e2e suite}"
  )
}

# bosh_env_run ACTION NAME STATE CREDS MANIFEST [-o OPS | -v VAR=VALUE]...:
# bosh int of the manifest into $E2E_OUT/NAMEmanifest.yml (for the suite
# and for people), then bosh ACTION of it with its state in
# STATE and its vars store in CREDS, logged to $E2E_OUT/NAMEACTION.log.
bosh_env_run() {
  local action=$1 name=$2 state=$3 creds=$4 start_s=$SECONDS
  shift 4
  bosh_env_vars
  local args=("$@" "${BOSH_ENV_VARS[@]}" --vars-store "$creds")
  umask 077 # the manifest, the state and the vars store hold keys
  in_ns env HOME="$HOME" "$E2E_BOSH" int "${args[@]}" >"$E2E_OUT/${name}manifest.yml" ||
    die "bosh int of $1 failed"
  log "bosh $action (log in $E2E_OUT/$name$action.log)"
  if ! in_ns timeout "$E2E_CREATE_ENV_TIMEOUT" "$E2E_BOSH" --tty -n "$action" "${args[@]}" --state "$state" \
    >"$E2E_OUT/$name$action.log" 2>&1; then
    tail -n 30 "$E2E_OUT/$name$action.log" >&2
    die "bosh $action failed after $((SECONDS - start_s)) s: see $E2E_OUT/$name$action.log"
  fi
  log "bosh $action succeeded in $((SECONDS - start_s)) s"
}
