#!/usr/bin/env bash
# 20-release.sh: the bosh CLI and bosh-agent (make tools) and the CPI's BOSH
# release (make release → $E2E_CPI_RELEASE). Both make targets rebuild only
# what changed, so it is safe to re-run.
set -euo pipefail
. "$(dirname "$0")/env.sh"

make -C "$E2E_ROOT" --no-print-directory tools release
for f in "$E2E_BOSH" "$E2E_AGENT" "$E2E_CPI_RELEASE"; do
  [ -s "$f" ] || die "make tools release did not produce $f"
done
log "tools and release ready: $E2E_CPI_RELEASE ($(du -h "$E2E_CPI_RELEASE" | cut -f1))"
