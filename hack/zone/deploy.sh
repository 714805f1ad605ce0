#!/usr/bin/env bash
# deploy.sh: run every numbered step in order. Each step checks what exists
# before creating it, so deploy.sh (or any step) can be re-run.
set -euo pipefail
cd "$(dirname "$0")"
for step in [0-9][0-9]-*.sh; do
  ./"$step"
done
