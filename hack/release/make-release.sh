#!/usr/bin/env bash
# make release: the BOSH release bosh-cloudstack-cpi as bin/cloudstack-cpi-release.tgz,
# offline, from a clean checkout, without changing a tracked file.
#  1. src/cloudstack-cpi/ (git-ignored) gets a copy of the Go module's source
#     and `go mod vendor`: create-release does not follow symlinks.
#  2. A staging copy of the release directory (bin/release/) gets the Go
#     toolchain blob (hack/release/go-blob.sh: the official linux-amd64
#     toolchain, the same bytes on every machine) with `bosh add-blob`, so
#     config/blobs.yml and blobs/ of the checkout stay as they are: the blob
#     is never committed.
#  3. `bosh create-release --force --tarball` in the staging copy, with
#     --version RELEASE_VERSION when that is set (make release VERSION=x.y.z).
# BOSH (default bin/bosh, from make tools) and RELEASE_TARBALL override.
set -euo pipefail
# The modes of what the release holds (src/'s copy, the staged packages)
# are not the builder's umask's.
umask 022
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bosh=${BOSH:-$root/bin/bosh}
tarball=${RELEASE_TARBALL:-$root/bin/cloudstack-cpi-release.tgz}
staging=$root/bin/release
version=${RELEASE_VERSION:-}
[ -x "$bosh" ] || { echo "make-release.sh: $bosh is missing: run make tools" >&2; exit 1; }
# A BOSH release version: numbers and dots, then an optional -pre or +build
# part (1.2.3, 1.2.3-rc.1), as bosh create-release --version takes them.
if [ -n "$version" ] && ! [[ $version =~ ^[0-9]+(\.[0-9]+)*([-+][0-9A-Za-z]+([.+-][0-9A-Za-z]+)*)?$ ]]; then
  echo "make-release.sh: VERSION '$version' is not a release version: want e.g. 0.1.0 or 0.2.0-rc.1" >&2
  exit 1
fi

fill_src() {
  local dst=$root/src/cloudstack-cpi
  rm -rf "$dst"
  mkdir -p "$dst"
  # The module's own files: tracked and untracked-but-not-ignored, without
  # tests, the separate tools module, docs and the release's own directories.
  git ls-files -z --cached --others --exclude-standard |
    grep -zv -E '^(src|jobs|packages|manifests|tools|docs|spec|hack|\.ci)/|^config/[^/]*\.yml$|_test\.go$|/testdata/' |
    while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$dst"
  # The CPI's -version: the release's version when it has one.
  if [ -n "$version" ]; then
    echo "$version" > "$dst/VERSION"
  else
    git describe --tags --always --dirty 2>/dev/null > "$dst/VERSION" || echo dev > "$dst/VERSION"
  fi
  (cd "$dst" && GOFLAGS=-mod=mod go mod vendor)
}

stage() {
  rm -rf "$staging"
  mkdir -p "$staging/config" "$staging/src"
  cp config/final.yml config/blobs.yml "$staging/config/"
  cp -a jobs packages "$staging/"
  cp -a src/cloudstack-cpi src/README.md "$staging/src/"
  hack/release/go-blob.sh "$root/bin/go-linux-amd64.tgz"
  (cd "$staging" && "$bosh" --tty -n add-blob "$root/bin/go-linux-amd64.tgz" golang-1.26-linux/go-linux-amd64.tgz >/dev/null)
}

fill_src
stage
rm -f "$tarball"
(cd "$staging" && "$bosh" --tty -n create-release --force --name bosh-cloudstack-cpi ${version:+--version "$version"} --tarball "$tarball")
[ -s "$tarball" ] || { echo "make-release.sh: bosh create-release wrote no $tarball" >&2; exit 1; }
echo "release: $tarball ($(du -h "$tarball" | cut -f1))"
