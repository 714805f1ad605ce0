#!/usr/bin/env bash
# up.sh: the whole simulated environment, step by step. Every step is safe
# to re-run on its own; on a failure, down.sh cleans up whatever was made.
# With E2E_HYPERVISOR=KVM (make e2e-kvm) it stops before create-env: the
# KVM phase's create-env is the suite's (TestKVMCreateEnv).
set -euo pipefail
cd "$(dirname "$0")"
# E2E_HYPERVISOR, or the one a running environment records (env.sh is not
# sourced here: what it exports depends on the namespace, which only
# 10-simulator-up.sh decides).
hypervisor=${E2E_HYPERVISOR:-$(cat "${E2E_OUT:-_out}/hypervisor" 2>/dev/null || echo XenServer)}
start=$SECONDS
steps=(10-simulator-up.sh 20-release.sh 30-stemcell.sh 35-launcher.sh)
[ "$hypervisor" = KVM ] || steps+=(40-create-env.sh)
for step in "${steps[@]}"; do
  ./"$step"
done
echo "up.sh: the environment ($hypervisor hosts) is up in $((SECONDS - start)) s" >&2
