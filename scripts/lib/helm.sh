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
RECIPE=2
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
# Stamped as helm's Makefile does: its version, and the Kubernetes minor of its client-go module,
# which `helm template` and `helm lint` assume (unstamped they assume v1.20 and refuse our chart's
# kubeVersion).
(cd "$WORK/src" && go mod tidy -e >&2)
k8s_minor="$(cd "$WORK/src" && go list -m -f '{{.Version}}' k8s.io/client-go)"
k8s_minor="${k8s_minor#v0.}"
k8s_minor="${k8s_minor%%.*}"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=${VERSION}"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags+=" -X ${pkg}.k8sVersionMajor=1 -X ${pkg}.k8sVersionMinor=${k8s_minor}"
done
(cd "$WORK/src" && go build -trimpath -ldflags "$ldflags" -o "$WORK/out/helm" helm.sh/helm/v3/cmd/helm >&2)
"$WORK/out/helm" version --short >&2
# A chart requiring 1.30 renders: the stamp took.
mkdir -p "$WORK/probe"
printf 'apiVersion: v2\nname: probe\nversion: 0.0.1\nkubeVersion: ">= 1.30.0-0"\n' >"$WORK/probe/Chart.yaml"
"$WORK/out/helm" template probe "$WORK/probe" >/dev/null
cache_publish "$WORK/out" "$DEST"
log "built $DEST/helm"
printf '%s\n' "$DEST"
