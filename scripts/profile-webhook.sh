#!/usr/bin/env bash
# Where the webhook's CPU goes beyond the limit's, native code included: bench:webhook holds each
# server alone under its closed-loop load (--hold), `perf record` samples that process meanwhile (its
# JavaScript, V8's builtins and runtime, OpenSSL, libc, the kernel on its behalf), and
# bench/perf-diff.ts prints the two profiles side by side in µs per request (docs/webhook.md, "Where
# the time goes").
#
#   scripts/profile-webhook.sh [seconds per side, default 9]
#
# Needs perf (Debian: apt-get install linux-perf) and the right to profile a process of your own
# (root, or kernel.perf_event_paranoid <= 1). The profiles stay in the directory it prints.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

HELD="${1:-9}"
if ! [[ "$HELD" =~ ^[1-9][0-9]*$ ]]; then
  echo "profile-webhook: seconds must be a positive integer, not '$HELD'" >&2
  exit 2
fi
if ! command -v perf >/dev/null; then
  echo "profile-webhook: perf is not installed (Debian: apt-get install linux-perf)" >&2
  exit 1
fi

OUT="$(mktemp -d "${TMPDIR:-/tmp}/profile-webhook-XXXXXX")"
BENCH_PID=""
cleanup() {
  if [[ -n "$BENCH_PID" ]] && kill -0 "$BENCH_PID" 2>/dev/null; then kill "$BENCH_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

declare -A CPU
for side in limit webhook; do
  # The perf map names the JavaScript functions; the server runs two seconds past the window.
  node --expose-gc --perf-basic-prof-only-functions --import tsx bench/webhook.ts \
    --hold "$side" --duration $((HELD + 2)) >"$OUT/$side.log" 2>&1 &
  BENCH_PID=$!
  # Building the fleets and the warm-up take ~20 s here; give up after five minutes.
  for _ in $(seq 1 1500); do
    grep -q '^holding' "$OUT/$side.log" && break
    kill -0 "$BENCH_PID" 2>/dev/null || { cat "$OUT/$side.log" >&2; echo "profile-webhook: bench:webhook --hold $side exited early" >&2; exit 1; }
    sleep 0.2
  done
  grep -q '^holding' "$OUT/$side.log" || { echo "profile-webhook: $side never started holding (see $OUT/$side.log)" >&2; exit 1; }
  sleep 1
  perf record -p "$BENCH_PID" -e cpu-clock -F 2000 -o "$OUT/$side.data" -- sleep "$HELD" >/dev/null 2>"$OUT/$side.perf.log"
  wait "$BENCH_PID" || { tail -5 "$OUT/$side.log" >&2; echo "profile-webhook: $side had failed requests" >&2; exit 1; }
  perf report -i "$OUT/$side.data" --stdio --sort dso,sym >"$OUT/$side.txt" 2>/dev/null
  rm -f "/tmp/perf-$BENCH_PID.map"
  CPU[$side]="$(tail -1 "$OUT/$side.log" | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).cpu_us_per_request))')"
  echo "$side: $(tail -1 "$OUT/$side.log")"
done
BENCH_PID=""

npx tsx bench/perf-diff.ts "$OUT/limit.txt" "${CPU[limit]}" "$OUT/webhook.txt" "${CPU[webhook]}" 40
echo "profiles: $OUT"
