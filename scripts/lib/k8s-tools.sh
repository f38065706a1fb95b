#!/usr/bin/env bash
# Build the Kubernetes tools the workload-cluster tests and the install tests run, from the same
# k8s.io/kubernetes version as the test control plane (scripts/lib/k8s-module.sh):
#   kubectl                  `kubectl apply -f/-k`, `kubectl kustomize`, `kubectl drain` (a baseline)
#   kube-controller-manager  the controllers a real cluster runs (ReplicaSet, disruption, GC, ...)
#   kube-scheduler           binds pods to Nodes, so evicted pods land on another Node
#
# Into ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/k8s-tools-<ver>-r<recipe>/, never into the
# repository: built in a temporary directory, renamed into place only when every binary exists
# (scripts/lib/build-cache.sh), reused when warm. Prints that directory on stdout; progress goes
# to stderr.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/k8s-module.sh
source "$HERE/k8s-module.sh"
# shellcheck source=scripts/lib/build-cache.sh
source "$HERE/build-cache.sh"
# Bump RECIPE when the way the tools are built changes, so old caches are not reused.
RECIPE=1
DEST="$CACHE_ROOT/k8s-tools-${K8S_VERSION}-r${RECIPE}"
TOOLS=(kubectl kube-controller-manager kube-scheduler)

log() { printf '[k8s-tools] %s\n' "$*" >&2; }

if cache_ready "$DEST" "${TOOLS[@]}"; then
  printf '%s\n' "$DEST"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "MISSING TOOL: no Go toolchain; ${TOOLS[*]} are built from the Go module proxy."
  log "Install Go >= 1.24 (https://go.dev/doc/install, or 'apt-get install golang-go')."
  exit 1
fi

cache_lock k8s-tools-build
if cache_ready "$DEST" "${TOOLS[@]}"; then
  printf '%s\n' "$DEST"
  exit 0
fi

cache_workdir .k8s-tools-build
log "building ${TOOLS[*]} $K8S_VERSION into $DEST (a few minutes on first run)"
pkgs=()
for t in "${TOOLS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$t"); done
k8s_write_module "$WORK/src" tools "${pkgs[@]}"
mkdir -p "$WORK/out"

export GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=mod"
export CGO_ENABLED=0
# One `go build` for all three: the packages they share are compiled once.
(cd "$WORK/src" && go mod tidy -e >&2 &&
  go build -trimpath -ldflags "$(k8s_ldflags)" -o "$WORK/out/" "${pkgs[@]}" >&2)

for t in "${TOOLS[@]}"; do
  [[ -x "$WORK/out/$t" ]] || { log "go build produced no $t"; exit 1; }
done
"$WORK/out/kubectl" version --client >&2
"$WORK/out/kube-controller-manager" --version >&2
"$WORK/out/kube-scheduler" --version >&2
cache_publish "$WORK/out" "$DEST"
log "built $DEST"
printf '%s\n' "$DEST"
