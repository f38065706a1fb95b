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

K8S_VERSION="${K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
CACHE_ROOT="${METAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-maintenance}"
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

if [[ -f "$DEST/.complete" && -x "$DEST/kube-apiserver" && -x "$DEST/etcd" ]]; then
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

mkdir -p "$CACHE_ROOT"
# One builder at a time: a second caller waits for the first instead of building twice.
exec 9>"$CACHE_ROOT/.k8s-build.lock"
flock 9
if [[ -f "$DEST/.complete" ]]; then
  printf '%s\n' "$DEST"
  exit 0
fi

WORK="$(mktemp -d "$CACHE_ROOT/.build-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
log "building kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION into $DEST (a few minutes on first run)"

# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local paths,
# which is ignored for a dependency; pin each staging module to the matching published tag.
STAGING=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
  cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
  kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
  mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller)
STAGING_VERSION="v0.${K8S_VERSION#v1.}"

mkdir -p "$WORK/apiserver" "$WORK/etcd" "$WORK/out"
{
  echo "module metal-maintenance.invalid/testbins/apiserver"
  echo
  echo "go 1.24"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "replace ("
  for m in "${STAGING[@]}"; do echo "	k8s.io/$m => k8s.io/$m $STAGING_VERSION"; done
  echo ")"
} >"$WORK/apiserver/go.mod"
cat >"$WORK/apiserver/tools.go" <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO

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
# Stamp the version the way the Kubernetes release build does, so /version and client skew
# checks see v1.x.y instead of v0.0.0-master.
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION}"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
(cd "$WORK/apiserver" && go mod tidy -e >&2 &&
  go build -trimpath -ldflags "$ldflags" -o "$WORK/out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2)
log "kube-apiserver built"

"$WORK/out/etcd" --version >&2
"$WORK/out/kube-apiserver" --version >&2
touch "$WORK/out/.complete"
rm -rf "$DEST"
mv "$WORK/out" "$DEST"
printf '%s\n' "$DEST"
