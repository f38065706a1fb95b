#!/usr/bin/env bash
# The project's test command: everything a change must pass, on a fresh machine of this kind.
#
#   scripts/test.sh           install, prepare test infrastructure, type-check, lint, run every
#                             test (unit, integration on a real kube-apiserver + etcd, cluster mode
#                             on the stand-in cluster) and soak
#   scripts/test.sh --quick   the same without the soak scripts
#
# Test infrastructure (kube-apiserver, etcd, kubectl, kube-controller-manager, kube-scheduler, kwok,
# Cluster API's CRDs, sushy-tools, metal-operator's Redfish mock and its manager, helm, a PyYAML venv,
# Prometheus and promtool, cert-manager's controller and cainjector, shellcheck and check-jsonschema) is
# built or installed from the package registries into ~/.cache/metal-maintenance (never into git) and
# reused when warm. Results:
# .tmp/results/*.json; the last line is "N passed, N failed".
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
RESULTS="$ROOT/.tmp/results"
QUICK=0
[[ "${1:-}" == "--quick" ]] && QUICK=1
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
export NODE_OPTIONS="--experimental-vm-modules${NODE_OPTIONS:+ $NODE_OPTIONS}"
export NODE_NO_WARNINGS=1

started=$SECONDS
step() { printf '\n==> %s (%ds)\n' "$*" "$((SECONDS - started))"; }
# A check that is not a Jest test (type check, lint, a soak script): its outcome is one result.
check() {
  local name="$1"; shift
  local t0=$SECONDS
  if "$@"; then
    printf '{"name":"%s","passed":true,"seconds":%d}\n' "$name" "$((SECONDS - t0))" >"$RESULTS/check-$name.json"
  else
    printf '{"name":"%s","passed":false,"seconds":%d}\n' "$name" "$((SECONDS - t0))" >"$RESULTS/check-$name.json"
    printf '!! %s failed\n' "$name"
  fi
}

step "installing dependencies (npm ci)"
npm ci --no-audit --no-fund --loglevel=error || { echo "npm ci failed"; exit 1; }

step "preparing test infrastructure (cached in ~/.cache/metal-maintenance)"
for prep in k8s-binaries k8s-tools kwok capi-crds sushy-tools metal-mock metal-operator helm pyyaml prometheus cert-manager lint-tools; do
  bash "scripts/lib/$prep.sh" >/dev/null || { echo "preparing $prep failed (see above)"; exit 1; }
done

step "type check"
check typecheck npx tsc --noEmit -p tsconfig.json
step "lint"
check lint npm run -s lint
step "generated CRDs are current"
check crds-current npx tsx scripts/gen-crds.ts --check
step "generated chart and policy ConfigMap are current"
check chart-current npx tsx scripts/gen-chart.ts --check

step "unit tests"
npx jest --selectProjects unit --ci --json --outputFile="$RESULTS/jest-unit.json"

step "the image's files (scripts/build-dist.sh: the Dockerfile's steps), shared by the suites that run them"
# The lifecycle, drain, firmware, monitoring and dist suites start every binary from these files with
# its Deployment's command, args and env (e2e/harness/dist.ts); built here, not in a suite's setup.
check image-files npx tsx scripts/prepare-dist.ts

step "integration tests (real kube-apiserver + etcd, one file at a time per lane)"
# Two lanes, each its own Jest process and control plane. Beside the rest, which keeps its CPU nearly
# to itself, the waiting lane runs the files that mostly wait on a peer's fixed timer (jest.config.js
# WAIT_BOUND_FILES), then cluster mode on the stand-in cluster (e2e/stand-in: the install from
# manifests/ and the files of e2e/cluster-mode.files, which mostly wait on the suite's own timers).
# Without a report of cluster mode (the cluster did not come up) the summary counts it failed. The
# waiting lane's output is printed when both have ended, so neither interleaves with the other.
(
  METAL_TEST_LANE=waits "$ROOT/node_modules/.bin/jest" --selectProjects integration --ci --runInBand --json \
    --outputFile="$RESULTS/jest-integration-waits.json"
  printf '\n==> cluster mode on the stand-in cluster (%ds)\n' "$((SECONDS - started))"
  npx tsx scripts/cluster-mode-local.ts -- --ci --json --outputFile="$RESULTS/jest-cluster-mode.json"
) >"$ROOT/.tmp/lane-waits.log" 2>&1 &
waits_lane=$!
# However this script ends, the waiting lane ends with it (Jest's global teardown and the cluster-mode
# script's own stop their control planes on SIGTERM).
trap 'pkill -TERM -P "$waits_lane" 2>/dev/null; kill "$waits_lane" 2>/dev/null' EXIT
METAL_TEST_LANE=rest npx jest --selectProjects integration --ci --runInBand --json --outputFile="$RESULTS/jest-integration.json"
wait "$waits_lane"
step "integration tests: the waiting lane's output"
cat "$ROOT/.tmp/lane-waits.log"

if [[ $QUICK -eq 0 ]]; then
  for soak in $(node -e 'const s=require("./package.json").scripts;console.log(Object.keys(s).filter(k=>k.startsWith("soak:")).join(" "))'); do
    step "soak: npm run $soak"
    check "${soak/:/-}" npm run -s "$soak"
  done
fi

step "summary"
node scripts/lib/summarize-results.mjs "$RESULTS"
