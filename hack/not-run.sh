#!/usr/bin/env bash
# Runs a command (make test's go test) with BOSH_DEPLOYMENT_NOT_RUN naming a
# fresh file, where internal/fixtures' Require writes down each test it
# skipped for want of bosh-deployment's manifests (and RequireCommand each
# one that found a command missing); then says loudly how many did not run,
# which, and how to get what they need. Exits with the command's
# status and removes the file.
set -uo pipefail
list=$(mktemp "${TMPDIR:-/tmp}/bosh-deployment-not-run.XXXXXX") || exit 1
trap 'rm -f "$list"' EXIT
BOSH_DEPLOYMENT_NOT_RUN=$list "$@"
rc=$?
bar='!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
# Lines with " needs " are tests that found a command missing
# (fixtures.RequireCommand); the others lack bosh-deployment.
n=$(sort -u "$list" | grep -c ' needs ')
if [ "$n" -gt 0 ]; then
  echo "$bar"
  echo "!!! $n test(s) did NOT RUN for want of a command (package test needs command):"
  sort -u "$list" | grep ' needs ' | sed 's/^/!!!   /'
  echo "!!! Install the Debian packages named (make test-deps does, as root)."
  echo "$bar"
fi
n=$(sort -u "$list" | grep -vc ' needs ')
if [ "$n" -gt 0 ]; then
  echo "$bar"
  echo "!!! $n test(s) did NOT RUN: they need bosh-deployment's manifests, found nowhere (package test):"
  sort -u "$list" | grep -v ' needs ' | sed 's/^/!!!   /'
  echo "!!! Looked in \$BOSH_DEPLOYMENT_FIXTURES, ../shared/fixtures/bosh-deployment beside the"
  echo "!!! repository, and the cache make fixtures fills. To run them, either:"
  echo "!!!   make fixtures     (git clone of cloudfoundry/bosh-deployment at its pinned commit)"
  echo "!!!   BOSH_DEPLOYMENT_FIXTURES=<a bosh-deployment checkout> make test"
  echo "$bar"
fi
exit "$rc"
