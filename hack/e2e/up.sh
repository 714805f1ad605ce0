#!/usr/bin/env bash
# up.sh: the whole simulated environment, step by step. Every step is safe
# to re-run on its own; on a failure, down.sh cleans up whatever was made.
# With a stemcell whose VMs read their settings from an ISO
# (E2E_STEMCELL_KIND openstack or vsphere: make e2e-kvm, e2e-xen-openstack,
# e2e-vmware) it stops before create-env: those phases' create-env is the
# suite's.
set -euo pipefail
cd "$(dirname "$0")"
start=$SECONDS
for step in 10-simulator-up.sh 20-release.sh 30-stemcell.sh 35-launcher.sh; do
  ./"$step"
done
# What the environment runs, as 10-simulator-up.sh recorded it (env.sh is
# not sourced here: what it exports depends on the namespace, which only
# 10-simulator-up.sh decides).
out=${E2E_OUT:-_out}
kind=$(cat "$out/stemcell-kind")
[ "$kind" != cloudstack ] || ./40-create-env.sh
echo "up.sh: the environment ($(cat "$out/hypervisor") hosts, stemcell shape $kind) is up in $((SECONDS - start)) s" >&2
