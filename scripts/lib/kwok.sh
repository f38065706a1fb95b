#!/usr/bin/env bash
# Build kwok (sigs.k8s.io/kwok/cmd/kwok, a pinned release from the Go module proxy): simulated
# kubelets for the workload-cluster tests, so pods on fake Nodes start, run, terminate and
# report status like pods on real ones, without containers.
#
# Its own script and cache directory, not part of k8s-tools.sh: kwok is a separate module with its
# own release line and its own Kubernetes client version, so bumping one never rebuilds the other.
# Into ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/kwok-<version>-r<recipe>/, never into the
# repository; built in a temporary directory and renamed into place only when complete
# (scripts/lib/build-cache.sh), reused when warm. Prints that directory on stdout. Next to the binary,
# stages/ holds the module's own "fast" node and pod stages (kustomize/stage/{node/fast,node/heartbeat,
# pod/fast}: Nodes become Ready and keep a heartbeat, pods run, finish and go away when deleted), which
# kwok >= 0.8 needs passed with --config; they are copied from the downloaded module, not kept here.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/build-cache.sh
source "$HERE/build-cache.sh"
VERSION="${KWOK_VERSION:-v0.8.0}"
# Bump RECIPE when the way kwok is built changes, so old caches are not reused.
RECIPE=2
DEST="$CACHE_ROOT/kwok-${VERSION}-r${RECIPE}"

log() { printf '[kwok] %s\n' "$*" >&2; }
ready() { cache_ready "$DEST" kwok && [[ -s "$DEST/stages.yaml" ]]; }

if ready; then
  printf '%s\n' "$DEST"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "MISSING TOOL: no Go toolchain; kwok $VERSION is built from the Go module proxy."
  log "Install Go >= 1.26 (https://go.dev/doc/install, or 'apt-get install golang-go' if recent enough)."
  exit 1
fi

cache_lock kwok-build
if ready; then
  printf '%s\n' "$DEST"
  exit 0
fi

cache_workdir .kwok-build
log "building kwok $VERSION into $DEST"
mkdir -p "$WORK/src" "$WORK/out"
cat >"$WORK/src/go.mod" <<GOMOD
module metal-maintenance.invalid/testbins/kwok

go 1.26

require sigs.k8s.io/kwok $VERSION
GOMOD
cat >"$WORK/src/tools.go" <<'GO'
//go:build tools

package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
GO

export GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=mod"
export CGO_ENABLED=0
(cd "$WORK/src" && go mod tidy -e >&2 &&
  go build -trimpath -ldflags "-s -w" \
    -o "$WORK/out/kwok" sigs.k8s.io/kwok/cmd/kwok >&2)
"$WORK/out/kwok" --version >&2
src="$(cd "$WORK/src" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
for f in node/fast/node-initialize node/heartbeat/node-heartbeat pod/fast/pod-ready pod/fast/pod-complete \
  pod/fast/pod-delete; do
  printf -- '---\n' >>"$WORK/out/stages.yaml"
  cat "$src/kustomize/stage/$f.yaml" >>"$WORK/out/stages.yaml"
done
cache_publish "$WORK/out" "$DEST"
log "built $DEST/kwok"
printf '%s\n' "$DEST"
