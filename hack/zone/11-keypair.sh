#!/usr/bin/env bash
# 11-keypair.sh: the admin's SSH key pair $KEYPAIR_NAME: registered from
# KEYPAIR_PUBLIC_KEY when given (registerSSHKeyPair), otherwise created
# (createSSHKeyPair) with the private key written to
# $ZONE_OUT/$KEYPAIR_NAME.pem (mode 600; CloudStack returns it only once).
set -euo pipefail
. "$(dirname "$0")/env.sh"

if [ -n "$(find_id listSSHKeyPairs ".name == \"$KEYPAIR_NAME\"" name="$KEYPAIR_NAME")" ]; then
  log "key pair $KEYPAIR_NAME exists"
  exit 0
fi
if [ -n "$KEYPAIR_PUBLIC_KEY" ]; then
  cs registerSSHKeyPair name="$KEYPAIR_NAME" publickey="$KEYPAIR_PUBLIC_KEY" >/dev/null
  log "registered key pair $KEYPAIR_NAME"
  exit 0
fi
umask 077
cs createSSHKeyPair name="$KEYPAIR_NAME" | jq -r '.keypair.privatekey' >"$ZONE_OUT/$KEYPAIR_NAME.pem"
log "created key pair $KEYPAIR_NAME; private key in $ZONE_OUT/$KEYPAIR_NAME.pem"
