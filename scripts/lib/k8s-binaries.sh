#!/usr/bin/env bash
# Resolve (and if needed build) the kube-apiserver and etcd binaries the test control plane runs.
#
# Order of preference:
#   1. $KUBEBUILDER_ASSETS, when set, must hold kube-apiserver and etcd (envtest layout).
#   2. A complete versioned cache: ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/k8s-<ver>-etcd-<ver>/
#   3. A build from the Go module proxy into that cache. The build happens in a temporary
#      directory that is renamed into place only when both binaries exist, so a half-built
#      cache is never seen.
#
# Prints the directory holding both binaries on stdout; progress goes to stderr.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/k8s-module.sh
source "$HERE/k8s-module.sh"
# shellcheck source=scripts/lib/build-cache.sh
source "$HERE/build-cache.sh"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
# Bump RECIPE when the way the binaries are built changes, so old caches are not reused.
RECIPE=2
DEST="$CACHE_ROOT/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}-r${RECIPE}"

log() { printf '[k8s-binaries] %s\n' "$*" >&2; }

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  for b in kube-apiserver etcd; do
    if [[ ! -x "$KUBEBUILDER_ASSETS/$b" ]]; then
      log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no executable '$b'."
      log "Unset KUBEBUILDER_ASSETS to build the binaries from the Go module proxy instead."
      exit 1
    fi
  done
  printf '%s\n' "$KUBEBUILDER_ASSETS"
  exit 0
fi

if cache_ready "$DEST" kube-apiserver etcd; then
  printf '%s\n' "$DEST"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "No kube-apiserver/etcd binaries found and no Go toolchain to build them."
  log "Either install Go >= 1.24 (https://go.dev/doc/install, or 'apt-get install golang-go'),"
  log "or point KUBEBUILDER_ASSETS at a directory holding kube-apiserver and etcd"
  log "(for example the output of 'setup-envtest use 1.34.x -p path')."
  exit 1
fi

cache_lock k8s-build
if cache_ready "$DEST" kube-apiserver etcd; then
  printf '%s\n' "$DEST"
  exit 0
fi

cache_workdir .build
log "building kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION into $DEST (a few minutes on first run)"

mkdir -p "$WORK/etcd" "$WORK/out"
k8s_write_module "$WORK/apiserver" apiserver k8s.io/kubernetes/cmd/kube-apiserver
cat >"$WORK/etcd/go.mod" <<GOMOD
module metal-maintenance.invalid/testbins/etcd

go 1.24

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
GOMOD
cat >"$WORK/etcd/tools.go" <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO

export GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=mod"
export CGO_ENABLED=0
(cd "$WORK/etcd" && go mod tidy -e >&2 && go build -trimpath -ldflags "-s -w" -o "$WORK/out/etcd" go.etcd.io/etcd/server/v3 >&2)
log "etcd built"
ldflags="$(k8s_ldflags)"
(cd "$WORK/apiserver" && go mod tidy -e >&2 &&
  go build -trimpath -ldflags "$ldflags" -o "$WORK/out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2)
log "kube-apiserver built"

"$WORK/out/etcd" --version >&2
"$WORK/out/kube-apiserver" --version >&2
cache_publish "$WORK/out" "$DEST"
printf '%s\n' "$DEST"
