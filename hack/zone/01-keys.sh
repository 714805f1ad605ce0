#!/usr/bin/env bash
# 01-keys.sh: mint the root admin's API keys the way a harness does on a
# fresh CloudStack: log in (the CLI cannot: it signs with keys only), read
# the user's keys with getUserKeys and register a pair with registerUserKeys
# only when there is none (registering rotates them). Writes
# $ZONE_OUT/keys.env (mode 600); the keys are never printed.
set -euo pipefail
. "$(dirname "$0")/env.sh"

if [ -s "$ZONE_OUT/keys.env" ] && [ -n "${CLOUDSTACK_KEY:-}" ] && (cs listZones) >/dev/null 2>&1; then
  log "keys in $ZONE_OUT/keys.env work; keeping them"
  exit 0
fi

jar=$(mktemp)
trap 'rm -f "$jar"' EXIT

# api COMMAND [key=value ...] calls the API in the login session.
api() {
  local cmd=$1
  shift
  local args=(--silent --show-error --cookie "$jar" --cookie-jar "$jar" --data-urlencode "command=$cmd"
    --data-urlencode response=json)
  for kv in "$@"; do args+=(--data-urlencode "$kv"); done
  curl "${args[@]}" "$CLOUDSTACK_ENDPOINT"
}

login=$(api login username="$CS_ADMIN_USER" password="$CS_ADMIN_PASSWORD" domain="$CS_ADMIN_DOMAIN")
session=$(jq -r '.loginresponse.sessionkey // empty' <<<"$login")
user=$(jq -r '.loginresponse.userid // empty' <<<"$login")
[ -n "$session" ] && [ -n "$user" ] ||
  die "login as $CS_ADMIN_USER failed: $(jq -r '.. | .errortext? // empty' <<<"$login")"

keys=$(api getUserKeys id="$user" sessionkey="$session")
if [ -z "$(jq -r '.getuserkeysresponse.userkeys.secretkey // empty' <<<"$keys")" ]; then
  log "$CS_ADMIN_USER has no API keys; registering a pair"
  keys=$(api registerUserKeys id="$user" sessionkey="$session" |
    jq '{getuserkeysresponse: .registeruserkeysresponse}')
fi
api logout sessionkey="$session" >/dev/null || true

key=$(jq -r '.getuserkeysresponse.userkeys.apikey // empty' <<<"$keys")
secret=$(jq -r '.getuserkeysresponse.userkeys.secretkey // empty' <<<"$keys")
[ -n "$key" ] && [ -n "$secret" ] || die "no API keys for $CS_ADMIN_USER: $(jq -r '.. | .errortext? // empty' <<<"$keys")"
umask 077
printf 'CLOUDSTACK_KEY=%q\nCLOUDSTACK_SECRET=%q\n' "$key" "$secret" >"$ZONE_OUT/keys.env"
log "API keys of $CS_ADMIN_USER written to $ZONE_OUT/keys.env"
