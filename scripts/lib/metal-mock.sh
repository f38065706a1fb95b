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

source "$(dirname "${BASH_SOURCE[0]}")/metal-operator-common.sh"
# Bump RECIPE when the launcher or the build changes, so old caches are not reused.
RECIPE=1
DEST="$CACHE_ROOT/metal-mock-${MO_VERSION}-r${RECIPE}"

log() { printf '[metal-mock] %s\n' "$*" >&2; }

build_mock() {
  local out="$1"
  log "building metal-operator $MO_VERSION bmc/mock/server into $DEST"
  mkdir -p "$WORK/src"
  cat >"$WORK/src/go.mod" <<GOMOD
module metal-maintenance.invalid/peers/metalmock

go 1.26

require $MO_MODULE $MO_VERSION
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
  (cd "$WORK/src" && GOFLAGS="$GOFLAGS -mod=mod" go mod tidy >&2 &&
    GOFLAGS="$GOFLAGS -mod=mod" go build -trimpath -ldflags "-s -w" -o "$out/metal-mock" . >&2)
}

mo_cached_or_build metal-mock "$DEST" build_mock
