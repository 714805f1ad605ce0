#!/usr/bin/env bash
# Writes the golang-1.26-linux package's blob: the official linux-amd64 Go
# toolchain, fetched through the Go module proxy as the module
# golang.org/toolchain (checked against the checksum database) into the Go
# module cache, trimmed to what `go build` needs (no tests, docs, API lists,
# the cmd sources, lib/, gofmt or the pprof/trace/fix/doc tools) and packed
# the same on every machine (hack/release/goblob): whatever the OS,
# architecture, umask or module cache, one commit gives one blob.
# Usage: go-blob.sh OUT.tgz. Reuses OUT.tgz when it was made from the same
# module by the same packer.
set -euo pipefail
out=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

# The pin: the one place that names the toolchain the release compiles with.
# Moving to another 1.26 patch release is this line alone; another minor
# version is a package of another name (packages/golang-1.26-linux).
toolchain=golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64
# For hack/release/goblob's tests only, which serve a fake toolchain from a
# module proxy on loopback.
toolchain=${GO_BLOB_TOOLCHAIN_MODULE:-$toolchain}
case "$toolchain" in
  *@v0.0.1-go1.26.*.linux-amd64) ;;
  *) echo "go-blob.sh: the package is golang-1.26-linux, but the toolchain module is $toolchain" >&2; exit 1 ;;
esac

cd "$(dirname "$0")/../.."
# CGO_ENABLED=0 as under make: the stamp names the packer's binary, which
# would otherwise differ between make release and a direct run.
CGO_ENABLED=0 go run ./hack/release/goblob -module "$toolchain" -out "$out"
