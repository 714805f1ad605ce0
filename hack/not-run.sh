#!/usr/bin/env bash
# Runs a command (make test's go test) with BOSH_DEPLOYMENT_NOT_RUN naming a
# fresh file, where internal/fixtures' Require writes down each test it
# skipped for want of bosh-deployment's manifests; then says loudly how many
# did not run, which, and how to get the manifests. Exits with the command's
# status and removes the file.
set -uo pipefail
list=$(mktemp "${TMPDIR:-/tmp}/bosh-deployment-not-run.XXXXXX") || exit 1
trap 'rm -f "$list"' EXIT
BOSH_DEPLOYMENT_NOT_RUN=$list "$@"
rc=$?
n=$(sort -u "$list" | grep -c .)
if [ "$n" -gt 0 ]; then
  bar='!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
  echo "$bar"
  echo "!!! $n test(s) did NOT RUN: they need bosh-deployment's manifests, found nowhere (package test):"
  sort -u "$list" | sed 's/^/!!!   /'
  echo "!!! Looked in \$BOSH_DEPLOYMENT_FIXTURES, ../shared/fixtures/bosh-deployment beside the"
  echo "!!! repository, and the cache make fixtures fills. To run them, either:"
  echo "!!!   make fixtures     (git clone of cloudfoundry/bosh-deployment at its pinned commit)"
  echo "!!!   BOSH_DEPLOYMENT_FIXTURES=<a bosh-deployment checkout> make test"
  echo "$bar"
fi
exit "$rc"
