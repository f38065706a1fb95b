#!/usr/bin/env bash
# Build cert-manager's controller and cainjector from the Go module proxy (the published module
# github.com/cert-manager/cert-manager at CERT_MANAGER_VERSION) into
# ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/cert-manager-<version>-r<recipe>/, never into the
# repository. Upstream's cmd/ directories are separate modules that are not published, so the two
# mains are ours (scripts/lib/cert-manager/*/main.go): they wire cert-manager's own packages as its
# binaries do. The CRDs are read from the module (deploy/crds), never copied.
#
#   scripts/lib/cert-manager.sh              prints the directory holding `controller` and `cainjector`
#   scripts/lib/cert-manager.sh --crds-dir   prints the module's deploy/crds directory
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/build-cache.sh"

CERT_MANAGER_VERSION="${CERT_MANAGER_VERSION:-v1.21.2}"
MODULE=github.com/cert-manager/cert-manager
# Keyed by the version and by this recipe (this script and the mains), so an edit is never served
# an old build.
RECIPE="$(cat "${BASH_SOURCE[0]}" "$HERE"/cert-manager/*/main.go | sha256sum | cut -c1-12)"
DEST="$CACHE_ROOT/cert-manager-${CERT_MANAGER_VERSION}-${RECIPE}"

log() { printf '[cert-manager] %s\n' "$*" >&2; }

if ! command -v go >/dev/null 2>&1; then
  log "MISSING TOOL: no Go toolchain; cert-manager $CERT_MANAGER_VERSION is built from the Go module proxy."
  log "Install Go >= 1.26 (https://go.dev/doc/install, or 'apt-get install golang-go' if recent enough)."
  exit 1
fi

module_dir() {
  local dir
  dir="$(GOFLAGS=-mod=mod go mod download -json "$MODULE@$CERT_MANAGER_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  [[ -n "$dir" && -d "$dir/deploy/crds" ]] || { log "could not download $MODULE@$CERT_MANAGER_VERSION"; exit 1; }
  printf '%s\n' "$dir"
}

if [[ "${1:-}" == "--crds-dir" ]]; then
  printf '%s/deploy/crds\n' "$(module_dir)"
  exit 0
fi

if cache_ready "$DEST" controller cainjector; then
  printf '%s\n' "$DEST"
  exit 0
fi
cache_lock cert-manager-build
if cache_ready "$DEST" controller cainjector; then
  printf '%s\n' "$DEST"
  exit 0
fi
cache_workdir .cert-manager-build
log "building cert-manager $CERT_MANAGER_VERSION controller and cainjector into $DEST (a few minutes, once)"
src="$WORK/src"
mkdir -p "$src" "$WORK/out"
cp -r "$HERE/cert-manager/controller" "$HERE/cert-manager/cainjector" "$src/"
cat >"$src/go.mod" <<GOMOD
module metal-maintenance.invalid/testbins/cert-manager

go 1.26

require $MODULE $CERT_MANAGER_VERSION
GOMOD
export GOFLAGS="-buildvcs=false" CGO_ENABLED=0
# Every other requirement is what cert-manager's own go.mod selects (minimal version selection).
(cd "$src" && go mod tidy >&2)
(cd "$src" && go build -trimpath -ldflags "-s -w -X $MODULE/pkg/util.AppVersion=$CERT_MANAGER_VERSION" \
  -o "$WORK/out/" ./controller ./cainjector >&2)
printf '%s\n' "$CERT_MANAGER_VERSION" >"$WORK/out/VERSION"
cache_publish "$WORK/out" "$DEST"
log "built $DEST"
printf '%s\n' "$DEST"
