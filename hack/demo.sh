#!/usr/bin/env bash
# make demo: start the simulator, pipe the director's JSON through the CPI
# binary exactly as a director would, and print each call and its answer.
set -euo pipefail
cd "$(dirname "$0")/.."
out=hack/_out/demo
rm -rf "$out"; mkdir -p "$out"
key=demo-api-key secret=demo-secret-key

bin/cloudstack-simulator -listen 127.0.0.1:0 -admin-keys "$key:$secret" -job-latency 200ms \
  -allow-loopback-urls >"$out/simulator.log" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null; wait $sim 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  endpoint=$(grep -o 'http://[^ ]*/client/api' "$out/simulator.log" 2>/dev/null || true)
  [ -n "$endpoint" ] && break
  sleep 0.1
done
[ -n "$endpoint" ] || { echo "the simulator did not start:"; cat "$out/simulator.log"; exit 1; }
base=${endpoint%/client/api}
echo "CloudStack simulator: $endpoint"

cat >"$out/cpi.json" <<JSON
{"cloudstack": {"endpoint": "$endpoint", "api_key": "$key", "secret_access_key": "$secret",
  "default_zone": "Sandbox-simulator"},
 "stemcell": {"publish": "upload"}}
JSON
go run ./hack/mkimage -kind vhd.bz2 -o "$out/image"

n=0
cpi() {
  n=$((n + 1))
  printf '\n\033[1m%d. %s\033[0m\n→ %s\n' "$n" "$1" "$2"
  printf '← '
  printf '%s' "$2" | bin/cloudstack-cpi -configPath "$out/cpi.json" 2>>"$out/cpi.log" | tee "$out/last.json"
  echo
}
ctx='"context":{"director_uuid":"demo-director","request_id":"cpi-000001"}'

cpi "What the CPI supports" "{\"method\":\"info\",\"arguments\":[],$ctx}"
cpi "Upload a CloudStack stemcell (bzip2'd VHD)" \
  "{\"method\":\"create_stemcell\",\"arguments\":[\"$out/image\",{\"name\":\"bosh-cloudstack-xen-ubuntu-jammy-go_agent\",\"version\":\"1.0\",\"infrastructure\":\"cloudstack\",\"hypervisor\":\"xen\",\"disk_format\":\"vhdx\",\"os_type\":\"linux\",\"architecture\":\"x86_64\"}],$ctx}"
stemcell=$(jq -r '.result // empty' "$out/last.json")
vmctx='"context":{"director_uuid":"demo-director","request_id":"cpi-000002","vm":{"stemcell":{"api_version":3}}}'
cpi "Create a VM: a static IP on guest-network, a 2 GiB ephemeral disk (API v2 answers [vm_cid, networks])" \
  "{\"method\":\"create_vm\",\"arguments\":[\"agent-demo\",\"$stemcell\",{\"compute_offering\":\"Small Instance\",\"ephemeral_disk_size\":2048,\"ephemeral_disk_offering\":\"Custom\"},{\"default\":{\"type\":\"manual\",\"ip\":\"10.1.1.10\",\"netmask\":\"255.255.255.0\",\"gateway\":\"10.1.1.1\",\"dns\":[\"10.1.1.2\"],\"default\":[\"dns\",\"gateway\"],\"cloud_properties\":{\"name\":\"guest-network\"}}},[],{\"bosh\":{\"group\":\"demo-web\"}}],\"api_version\":2,$vmctx}"
vm=$(jq -r '.result[0] // empty' "$out/last.json")
if [ -n "$vm" ]; then
  printf '\n   The agent reads its settings from the virtual router'"'"'s metadata service:\n   '
  curl -fsS "$base/metadata/$vm/latest/user-data" | jq -c '{agent_id, networks, disks}'
  cpi "Tag the VM and name it after its instance" \
    "{\"method\":\"set_vm_metadata\",\"arguments\":[\"$vm\",{\"director\":\"demo\",\"deployment\":\"demo\",\"instance_group\":\"web\",\"name\":\"web/0\",\"index\":\"0\"}],$vmctx}"
  cpi "Does it exist?" "{\"method\":\"has_vm\",\"arguments\":[\"$vm\"],$vmctx}"
  cpi "Delete it (the ephemeral disk goes with it)" "{\"method\":\"delete_vm\",\"arguments\":[\"$vm\"],$vmctx}"
  cpi "Delete it again: deletes are idempotent" "{\"method\":\"delete_vm\",\"arguments\":[\"$vm\"],$vmctx}"
fi
cpi "Is there a VM by this name? (exact match, never a substring)" \
  "{\"method\":\"has_vm\",\"arguments\":[\"cpivm-does-not-exist\"],$ctx}"
if [ -n "$stemcell" ]; then
  cpi "Delete the stemcell" "{\"method\":\"delete_stemcell\",\"arguments\":[\"$stemcell\"],$ctx}"
  cpi "Delete it again" "{\"method\":\"delete_stemcell\",\"arguments\":[\"$stemcell\"],$ctx}"
fi
cpi "A method that does not exist" "{\"method\":\"fly\",\"arguments\":[],$ctx}"
cpi "Malformed JSON" "{\"method\":"

printf '\n\033[1mCloudStack API calls the CPI made (from the simulator request log)\033[0m\n'
curl -fsS -u admin:password "$base/sim/requests" |
  jq -r 'group_by(.command)[] | "\(length)\t\(.[0].command)"'
echo
echo "CPI logs (stderr): $out/cpi.log — simulator log: $out/simulator.log"
