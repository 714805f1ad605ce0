#!/usr/bin/env bash
# Runs a command with TMPDIR set to a fresh directory and fails when the
# command leaves anything in it: every test, simulator and CPI the command
# starts must remove its temporary files, also when it is killed.
set -uo pipefail
tmp=$(mktemp -d "${TMPDIR:-/tmp}/no-leftovers.XXXXXX")
TMPDIR=$tmp "$@"
rc=$?
left=$(cd "$tmp" && ls -A)
if [ -n "$left" ]; then
  echo "FAIL: '$*' left temporary files behind:" >&2
  (cd "$tmp" && du -sh -- * .[!.]* 2>/dev/null) >&2
  rc=1
fi
rm -rf "$tmp"
exit $rc
