#!/usr/bin/env bash
# make demo: start the simulator, pipe the director's JSON through the CPI
# binary exactly as a director would — the CPI's whole main job, one request
# id per call — and print each call and its answer. The simulator is stopped
# and the temporary directory removed on every path (DEMO_KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib/simulator.sh
out=$(mktemp -d "${TMPDIR:-/tmp}/cpi-demo.XXXXXX")
sim=
cleanup() {
  local rc=$?
  [ -n "$sim" ] && { daemon_stop "$sim" 10; wait "$sim" 2>/dev/null || true; }
  if [ "$rc" -ne 0 ]; then
    echo "demo failed; the last CPI and simulator log lines:" >&2
    tail -n 5 "$out/cpi.log" "$out/simulator.log" >&2 2>/dev/null || true
  fi
  if [ -n "${DEMO_KEEP:-}" ]; then echo "logs kept in $out" >&2; else rm -rf "$out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
key=demo-api-key secret=demo-secret-key

# The upload monitor polls every second here; CloudStack's default
# upload.monitoring.interval is 60 s, which the stemcell upload would wait.
daemon_start "$out/simulator.log" bin/cloudstack-simulator -listen 127.0.0.1:0 -admin-keys "$key:$secret" \
  -job-latency 200ms -upload-monitoring-interval 1s -allow-loopback-urls
sim=$DAEMON_PID
endpoint=$(simulator_endpoint "$out/simulator.log" "$sim" 5)
base=${endpoint%/client/api}
echo "CloudStack simulator: $endpoint"

cat >"$out/cpi.json" <<JSON
{"cloudstack": {"endpoint": "$endpoint", "api_key": "$key", "secret_access_key": "$secret",
  "default_zone": "Sandbox-simulator"},
 "stemcell": {"publish": "upload"}}
JSON
go run ./hack/mkimage -kind vhd.bz2 -o "$out/image"

n=0
# send TITLE BODY: one request as the director pipes it, and its answer.
send() {
  printf '\n\033[1m%d. %s\033[0m\n→ %s\n← ' "$n" "$1" "$2"
  printf '%s' "$2" | bin/cloudstack-cpi -configPath "$out/cpi.json" 2>>"$out/cpi.log" | tee "$out/last.json"
  echo
}
# cpi TITLE METHOD ARGUMENTS: a request with its own request id. After
# info, the director speaks the CPI API version info answered (2), which
# makes create_vm answer [vm_cid, networks] and attach_disk a disk hint.
cpi() {
  n=$((n + 1))
  local ctx
  ctx=$(printf '"context":{"director_uuid":"demo-director","request_id":"cpi-%06d"%s}' "$n" "${VMCTX:-}")
  send "$1" "{\"method\":\"$2\",\"arguments\":$3,$ctx${API:-}}"
}
result() { jq -r "${1:-.result} // empty" "$out/last.json"; }
need() { [ -n "$2" ] || { echo "no $1 in the answer: stopping" >&2; exit 1; }; }

cpi "What the CPI supports" info '[]'
API=",\"api_version\":$(result .result.api_version)"
cpi "Upload a CloudStack stemcell (bzip2'd VHD)" create_stemcell \
  "[\"$out/image\",{\"name\":\"bosh-cloudstack-xen-ubuntu-jammy-go_agent\",\"version\":\"1.0\",\"infrastructure\":\"cloudstack\",\"hypervisor\":\"xen\",\"disk_format\":\"vhdx\",\"os_type\":\"linux\",\"architecture\":\"x86_64\"}]"
stemcell=$(result); need "stemcell CID" "$stemcell"

VMCTX=',"vm":{"stemcell":{"api_version":3}}'
cpi "Create a VM: a static IP on guest-network, a 2 GiB ephemeral disk (API v2 answers [vm_cid, networks])" create_vm \
  "[\"agent-demo\",\"$stemcell\",{\"compute_offering\":\"Small Instance\",\"ephemeral_disk_size\":2048,\"ephemeral_disk_offering\":\"Custom\"},{\"default\":{\"type\":\"manual\",\"ip\":\"10.1.1.10\",\"netmask\":\"255.255.255.0\",\"gateway\":\"10.1.1.1\",\"dns\":[\"10.1.1.2\"],\"default\":[\"dns\",\"gateway\"],\"cloud_properties\":{\"name\":\"guest-network\"}}},[],{\"bosh\":{\"group\":\"demo-web\"}}]"
vm=$(result '.result[0]'); need "VM CID" "$vm"
printf '\n   The agent reads its settings from the virtual router'"'"'s metadata service:\n   '
curl -fsS "$base/metadata/$vm/latest/user-data" | jq -c '{agent_id, networks, disks}'
cpi "Tag the VM and name it after its instance" set_vm_metadata \
  "[\"$vm\",{\"director\":\"demo\",\"deployment\":\"demo\",\"instance_group\":\"web\",\"name\":\"web/0\",\"index\":\"0\"}]"
cpi "Does it exist?" has_vm "[\"$vm\"]"

cpi "A persistent disk of 3000 MiB (the customized offering rounds it up to 3 GiB), near the VM" create_disk \
  "[3000,{\"disk_offering\":\"Custom\"},\"$vm\"]"
disk=$(result); need "disk CID" "$disk"
cpi "Attach it: the answer tells the agent which device it is" attach_disk "[\"$vm\",\"$disk\"]"
cpi "The VM's persistent disks" get_disks "[\"$vm\"]"
cpi "Snapshot the disk, tagged with its metadata" snapshot_disk \
  "[\"$disk\",{\"director\":\"demo\",\"deployment\":\"demo\",\"instance_group\":\"web\",\"instance_index\":\"0\"}]"
snapshot=$(result); need "snapshot CID" "$snapshot"
cpi "Delete the snapshot" delete_snapshot "[\"$snapshot\"]"
cpi "Detach the disk" detach_disk "[\"$vm\",\"$disk\"]"
cpi "Delete the disk" delete_disk "[\"$disk\"]"
cpi "A disk offering CloudStack does not have: an error answer" create_disk '[1024,{"disk_offering":"Huge"},null]'

cpi "Delete the VM (the ephemeral disk goes with it)" delete_vm "[\"$vm\"]"
cpi "Delete it again: deletes are idempotent" delete_vm "[\"$vm\"]"
VMCTX=
cpi "Is there a VM by this name? (exact match, never a substring)" has_vm '["cpivm-does-not-exist"]'
cpi "Delete the stemcell" delete_stemcell "[\"$stemcell\"]"
cpi "A method that does not exist" fly '[]'
n=$((n + 1))
send "Malformed JSON" '{"method":'

printf '\n\033[1mCloudStack API calls the CPI made (from the simulator request log)\033[0m\n'
curl -fsS -u admin:password "$base/sim/requests" |
  jq -r 'group_by(.command)[] | "\(length)\t\(.[0].command)"'
