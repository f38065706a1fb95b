#!/usr/bin/env bash
# Build upstream metal-operator's own manager (package github.com/ironcore-dev/metal-operator/cmd,
# the same pinned release as the Redfish mock in metal-mock.sh) from the Go module proxy into
# ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/metal-operator-<version>-r<recipe>/manager, never
# into the repository. It is built as upstream builds it (its own go.mod and go.sum, -mod=readonly),
# with no launcher of ours: the e2e suite in test/integration/upstream runs it unchanged.
#
#   scripts/lib/metal-operator.sh                prints the directory holding `manager`
#   scripts/lib/metal-operator.sh --module-dir   prints the module's source directory in the Go
#                                                module cache (CRDs, RBAC), downloading it if needed
#
# Keyed by version; built in a temporary directory and renamed into place only when complete; a
# warm cache is reused.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/metal-operator-common.sh"
# Bump RECIPE when the build changes, so old caches are not reused.
RECIPE=1
DEST="$CACHE_ROOT/metal-operator-${MO_VERSION}-r${RECIPE}"

log() { printf '[metal-operator] %s\n' "$*" >&2; }

if [[ "${1:-}" == "--module-dir" ]]; then
  mo_module_dir
  exit 0
fi

build_manager() {
  local out="$1" src
  src="$(mo_module_dir)"
  log "building metal-operator $MO_VERSION cmd (its manager) into $DEST"
  # The module cache is read-only: build in place with upstream's own go.sum, output elsewhere.
  (cd "$src" && GOFLAGS="$GOFLAGS -mod=readonly" go build -trimpath -ldflags "-s -w" -o "$out/manager" ./cmd >&2)
}

mo_cached_or_build metal-operator "$DEST" build_manager
