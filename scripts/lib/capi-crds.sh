#!/usr/bin/env bash
# Fetch Cluster API's own CustomResourceDefinitions (Cluster, Machine, MachineDrainRule) from the
# published sigs.k8s.io/cluster-api module on the Go module proxy, for the drain suite's CAPI-shaped
# Machines. Nothing is built: the module's config/crd/bases/ holds the CRDs its API types generate.
#
# Into ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/capi-crds-<version>-r<recipe>/, never into the
# repository; assembled in a temporary directory and renamed into place only when complete
# (scripts/lib/build-cache.sh), reused when warm. Prints that directory on stdout.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/build-cache.sh
source "$HERE/build-cache.sh"
VERSION="${CAPI_VERSION:-v1.13.6}"
RECIPE=1
DEST="$CACHE_ROOT/capi-crds-${VERSION}-r${RECIPE}"
KINDS=(clusters machines machinedrainrules)

log() { printf '[capi-crds] %s\n' "$*" >&2; }
ready() {
  [[ -f "$DEST/.complete" ]] || return 1
  local k
  for k in "${KINDS[@]}"; do [[ -s "$DEST/cluster.x-k8s.io_$k.yaml" ]] || return 1; done
}

if ready; then
  printf '%s\n' "$DEST"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "MISSING TOOL: no Go toolchain; Cluster API's CRDs come from the Go module proxy (sigs.k8s.io/cluster-api $VERSION)."
  log "Install Go >= 1.26 (https://go.dev/doc/install, or 'apt-get install golang-go' if recent enough)."
  exit 1
fi

cache_lock capi-crds
if ready; then
  printf '%s\n' "$DEST"
  exit 0
fi

cache_workdir .capi-crds
log "fetching sigs.k8s.io/cluster-api $VERSION's CRDs into $DEST"
mkdir -p "$WORK/out"
# Its own module cache inside the work directory: only the module's files are wanted, and they are
# read-only in a module cache, so they are copied out before the directory goes.
src="$(cd "$WORK" && GOMODCACHE="$WORK/mod" GOFLAGS=-modcacherw go mod download -json "sigs.k8s.io/cluster-api@$VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$src/config/crd/bases" ]] || {
  log "sigs.k8s.io/cluster-api@$VERSION has no config/crd/bases"
  exit 1
}
for k in "${KINDS[@]}"; do cp "$src/config/crd/bases/cluster.x-k8s.io_$k.yaml" "$WORK/out/"; done
cache_publish "$WORK/out" "$DEST"
log "fetched $DEST"
printf '%s\n' "$DEST"
