#!/usr/bin/env bash
# The project's main job, in one command: a local control plane, the admission webhook (2 replicas),
# the maintenance, approval, budget, firmware and pipeline controllers, a simulated fleet of 50
# servers with tenants, claims and budgets, simulated BMCs, and a maintenance scenario shown live in
# the terminal (docs/demo.md).
#
#   scripts/demo.sh [--servers 50 --racks 5 --tenants 4 --webhook-replicas 2] [--keep] [--help]
#
# Everything the demo creates lives in one directory (printed at the start): the control plane, the
# ServiceAccount kubeconfigs, certificates, and a log file per binary. Ctrl-C stops it at any point;
# on every exit the demo's processes and the control plane are stopped and the directory removed.
# The choreography is TypeScript (e2e/demo/); this only launches.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [[ ! -d node_modules ]]; then
  echo "demo: installing dependencies (npm ci)…" >&2
  npm ci --no-audit --no-fund >&2
fi

DIR="$(mktemp -d "${TMPDIR:-/tmp}/metal-demo-XXXXXX")"
DEMO_PID=""

cleanup() {
  local code=$?
  # Finish the cleanup even if Ctrl-C is pressed again.
  trap '' INT TERM
  trap - EXIT
  if [[ -n "$DEMO_PID" ]] && kill -0 "$DEMO_PID" 2>/dev/null; then
    # One signal, to the demo alone: it stops what it started, each process once. The process group
    # (its own session) is killed only if something is still there after that.
    kill -TERM "$DEMO_PID" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$DEMO_PID" 2>/dev/null || break; sleep 0.1; done
  fi
  if [[ -n "$DEMO_PID" ]]; then kill -KILL -- "-$DEMO_PID" 2>/dev/null || true; fi
  scripts/control-plane.sh down "$DIR" >/dev/null 2>&1 || true
  rm -rf "$DIR"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Every temporary file of the demo and its harness (os.tmpdir()) goes under DIR; the watch trace of
# a broken budget goes where the caller's TMPDIR points, so it outlives the directory.
mkdir -p "$DIR/tmp" "$DIR/logs"
# setsid: its own process group, so cleanup can stop whatever is left of it at once.
TMPDIR="$DIR/tmp" METAL_TEST_LOG_DIR="$DIR/logs" METAL_DEMO_TRACE_DIR="${TMPDIR:-/tmp}" \
  setsid node --import tsx e2e/demo/main.ts --dir "$DIR" "$@" &
DEMO_PID=$!
wait "$DEMO_PID"
