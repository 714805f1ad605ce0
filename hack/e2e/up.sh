#!/usr/bin/env bash
# up.sh: the whole simulated environment, step by step. Every step is safe
# to re-run on its own; on a failure, down.sh cleans up whatever was made.
set -euo pipefail
cd "$(dirname "$0")"
start=$SECONDS
for step in 10-simulator-up.sh 20-release.sh 30-stemcell.sh 35-launcher.sh 40-create-env.sh; do
  ./"$step"
done
echo "up.sh: the environment is up in $((SECONDS - start)) s" >&2
