#!/usr/bin/env bash
# Build metal-operator's Redfish mock server (package github.com/ironcore-dev/metal-operator/
# bmc/mock/server, a pinned release from the Go module proxy) behind a small launcher of ours
# into ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/metal-mock-<version>/, never into the
# repository. The launcher adds what upstream's bmc/mock/main.go lacks for our tests: Basic
# auth on, loopback address, and a control listener that toggles the mock's 503 mode.
#
# Keyed by version; built in a temporary directory and renamed into place only when complete; a
# warm cache is reused. Prints the directory holding `metal-mock` on stdout.
set -euo pipefail

VERSION="${METAL_MOCK_VERSION:-v0.7.0}"
CACHE_ROOT="${METAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-maintenance}"
# Bump RECIPE when the launcher or the build changes, so old caches are not reused.
RECIPE=1
DEST="$CACHE_ROOT/metal-mock-${VERSION}-r${RECIPE}"

log() { printf '[metal-mock] %s\n' "$*" >&2; }

if [[ -f "$DEST/.complete" && -x "$DEST/metal-mock" ]]; then
  printf '%s\n' "$DEST"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "MISSING TOOL: no Go toolchain; metal-operator's mock is built from the Go module proxy."
  log "Install Go >= 1.26 (https://go.dev/doc/install, or 'apt-get install golang-go' if recent enough)."
  exit 1
fi

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.metal-mock-build.lock"
flock 9
if [[ -f "$DEST/.complete" ]]; then
  printf '%s\n' "$DEST"
  exit 0
fi

WORK="$(mktemp -d "$CACHE_ROOT/.metal-mock-build-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
log "building metal-operator $VERSION bmc/mock/server into $DEST"
mkdir -p "$WORK/src" "$WORK/out"
cat >"$WORK/src/go.mod" <<GOMOD
module metal-maintenance.invalid/peers/metalmock

go 1.26

require github.com/ironcore-dev/metal-operator $VERSION
GOMOD
cat >"$WORK/src/main.go" <<'GO'
// Launcher for metal-operator's Redfish mock in metal-maintenance's conformance tests.
package main

import (
	"context"
	"flag"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/ironcore-dev/metal-operator/bmc/mock/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8000", "Redfish listen address")
	control := flag.String("control-addr", "", "test control listen address (empty: none)")
	auth := flag.Bool("auth", true, "require HTTP Basic auth (admin/adminpass, foo/bar)")
	flag.Parse()

	var opts []server.Option
	if *auth {
		opts = append(opts, server.WithAuth())
	}
	srv := server.NewMockServer(logr.Discard(), *addr, opts...)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *control != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/unavailable", func(w http.ResponseWriter, r *http.Request) {
			srv.SetUnavailable(r.URL.Query().Get("on") == "true")
			w.WriteHeader(http.StatusNoContent)
		})
		mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
			srv.ResetBIOSSettings("437XR1138R2")
			srv.ResetBMCSettings("BMC")
			srv.ResetUpgradeTask()
			w.WriteHeader(http.StatusNoContent)
		})
		go func() { _ = http.ListenAndServe(*control, mux) }()
	}
	if err := srv.Start(ctx); err != nil {
		os.Exit(1)
	}
}
GO

export GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=mod"
export CGO_ENABLED=0
(cd "$WORK/src" && go mod tidy >&2 && go build -trimpath -ldflags "-s -w" -o "$WORK/out/metal-mock" . >&2)
printf '%s\n' "$VERSION" >"$WORK/out/VERSION"
touch "$WORK/out/.complete"
rm -rf "$DEST"
mv "$WORK/out" "$DEST"
log "built $DEST/metal-mock"
printf '%s\n' "$DEST"
