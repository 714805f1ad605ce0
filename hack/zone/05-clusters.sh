#!/usr/bin/env bash
# 05-clusters.sh: the pod's clusters ($CLUSTERS), each with its hosts
# (addHost) and primary storage pools (createStoragePool), as marvin's
# createClusters does.
set -euo pipefail
. "$(dirname "$0")/env.sh"

zone=$(zone_id)
pod=$(pod_id)
for spec in $CLUSTERS; do
  IFS='|' read -r name hosts pools <<<"$spec"
  cluster=$(find_id listClusters ".name == \"$name\"" zoneid="$zone" podid="$pod" name="$name")
  if [ -z "$cluster" ]; then
    cluster=$(cs addCluster zoneid="$zone" podid="$pod" clustername="$name" clustertype=CloudManaged \
      hypervisor="$HYPERVISOR" | jq -r '.cluster[0].id')
    log "created cluster $name ($HYPERVISOR)"
  fi
  # Hosts cannot be matched to their URLs afterwards: a cluster with as
  # many hosts as asked for is complete.
  have=$(cs listHosts clusterid="$cluster" type=Routing | jq -r '.count // 0')
  IFS=, read -r -a urls <<<"$hosts"
  for url in "${urls[@]:$have}"; do
    cs addHost zoneid="$zone" podid="$pod" clusterid="$cluster" hypervisor="$HYPERVISOR" url="$url" \
      username="$HOST_USERNAME" password="$HOST_PASSWORD" >/dev/null
    log "added host $url to $name"
  done
  IFS=, read -r -a names <<<"$pools"
  for pool in "${names[@]}"; do
    if [ -z "$(find_id listStoragePools ".name == \"$pool\"" clusterid="$cluster" name="$pool")" ]; then
      cs createStoragePool zoneid="$zone" podid="$pod" clusterid="$cluster" name="$pool" \
        url="$STORAGE_URL/$(tr '[:upper:]' '[:lower:]' <<<"$pool")" >/dev/null
      log "created primary storage $pool in $name"
    fi
  done
done
