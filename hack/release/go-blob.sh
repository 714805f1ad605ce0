#!/usr/bin/env bash
# Writes the golang-1.26-linux package's blob: a tarball of this machine's Go
# toolchain (go env GOROOT), trimmed to what `go build` needs (no tests, docs,
# API lists, the cmd sources, lib/, gofmt or the pprof/trace/fix/doc tools).
# Usage: go-blob.sh OUT.tgz. Reuses OUT.tgz when it was made from the same
# toolchain.
set -euo pipefail
out=$1
goroot=$(go env GOROOT)
stamp="$(go version) $goroot"
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
case "$(go env GOVERSION)" in
  go1.26*) ;;
  *) echo "go-blob.sh: the package is golang-1.26-linux, but this toolchain is $(go env GOVERSION)" >&2; exit 1 ;;
esac
tools="$goroot/pkg/tool/$(go env GOOS)_$(go env GOARCH)"
tar -C "$goroot" -czf "$out.tmp" \
  --anchored --exclude=./test --exclude=./api --exclude=./doc --exclude=./misc --exclude=./lib \
  --exclude=./src/cmd --exclude=./bin/gofmt --exclude=./pkg/tool/*/pprof --exclude=./pkg/tool/*/trace \
  --exclude=./pkg/tool/*/fix --exclude=./pkg/tool/*/doc \
  --no-anchored --exclude='*_test.go' --exclude=testdata \
  .
[ -x "$tools/compile" ] || { echo "go-blob.sh: no compiler in $tools" >&2; exit 1; }
mv "$out.tmp" "$out"
echo "$stamp" > "$out.stamp"
