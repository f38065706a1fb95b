#!/usr/bin/env bash
# Build helm (helm.sh/helm/v3/cmd/helm, a pinned release from the Go module proxy) for the chart
# tests: `helm lint` and `helm template` of charts/metal-maintenance (generated from manifests/ by
# `npm run gen:chart`), whose output the install tests apply to the real API server.
#
# Its own script and cache directory: helm is a separate module with its own release line and its
# own Kubernetes client version. Into ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/helm-<version>-r<recipe>/,
# never into the repository; built in a temporary directory and renamed into place only when
# complete (scripts/lib/build-cache.sh), reused when warm. Prints that directory on stdout.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/build-cache.sh
source "$HERE/build-cache.sh"
VERSION="${HELM_VERSION:-v3.19.5}"
# Bump RECIPE when the way helm is built changes, so old caches are not reused.
RECIPE=1
DEST="$CACHE_ROOT/helm-${VERSION}-r${RECIPE}"

log() { printf '[helm] %s\n' "$*" >&2; }

if cache_ready "$DEST" helm; then
  printf '%s\n' "$DEST"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "MISSING TOOL: no Go toolchain; helm $VERSION is built from the Go module proxy."
  log "Install Go >= 1.24 (https://go.dev/doc/install, or 'apt-get install golang-go')."
  exit 1
fi

cache_lock helm-build
if cache_ready "$DEST" helm; then
  printf '%s\n' "$DEST"
  exit 0
fi

cache_workdir .helm-build
log "building helm $VERSION into $DEST"
mkdir -p "$WORK/src" "$WORK/out"
cat >"$WORK/src/go.mod" <<GOMOD
module metal-maintenance.invalid/testbins/helm

go 1.24

require helm.sh/helm/v3 $VERSION
GOMOD
cat >"$WORK/src/tools.go" <<'GO'
//go:build tools

package tools

import _ "helm.sh/helm/v3/cmd/helm"
GO

export GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=mod"
export CGO_ENABLED=0
# helm stamps its version through internal/version; without it `helm version` says v3.x-dev.
(cd "$WORK/src" && go mod tidy -e >&2 &&
  go build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=${VERSION}" \
    -o "$WORK/out/helm" helm.sh/helm/v3/cmd/helm >&2)
"$WORK/out/helm" version --short >&2
cache_publish "$WORK/out" "$DEST"
log "built $DEST/helm"
printf '%s\n' "$DEST"
