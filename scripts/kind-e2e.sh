#!/usr/bin/env bash
# The e2e suites against a kind cluster, with the system installed as an operator installs it:
#
#   scripts/kind-e2e.sh [TEST_FILE...]   create the cluster (e2e/kind/kind-config.yaml), build the
#                                        image from the Dockerfile and `kind load` it, install
#                                        cert-manager and the system (e2e/kind: manifests/default
#                                        with the loaded image's tag), run the files in cluster mode
#                                        (E2E_TARGET=cluster), collect logs and events on failure,
#                                        delete the cluster
#   scripts/kind-e2e.sh --render DIR     only the steps that need no container engine: write the
#                                        install (kubectl kustomize e2e/kind) and the kind config to DIR
#
# Needs docker, kind, kubectl, Node.js 20 with npm. Default files: e2e/cluster-mode.files.
# Environment: KIND_CLUSTER_NAME, KIND_NODE_IMAGE, CERT_MANAGER_VERSION, KUBECTL, ARTIFACTS (where
# logs go, default .tmp/kind-e2e), KIND_KEEP=1 (keep the cluster).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CLUSTER="${KIND_CLUSTER_NAME:-metal-maintenance-e2e}"
# The Kubernetes minor of the project's own test control plane (scripts/lib/k8s-binaries.sh).
KIND_NODE_IMAGE="${KIND_NODE_IMAGE:-kindest/node:v1.34.0}"
# The cert-manager release scripts/lib/cert-manager.sh builds for the local suites.
CERT_MANAGER_VERSION="${CERT_MANAGER_VERSION:-v1.21.2}"
IMAGE="metal-maintenance:kind-e2e"
NAMESPACE="metal-maintenance-system"
ARTIFACTS="${ARTIFACTS:-.tmp/kind-e2e}"
KUBECTL="${KUBECTL:-kubectl}"
LIFECYCLE_DEPLOYMENTS=(webhook maintenance-controller approval-controller budget-controller)

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'kind-e2e: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }

render() {
  local out="$1"
  mkdir -p "$out"
  "$KUBECTL" kustomize e2e/kind >"$out/install.yaml"
  cp e2e/kind/kind-config.yaml "$out/kind-config.yaml"
  log "rendered the install ($(grep -c '^kind: ' "$out/install.yaml") objects) and the kind config into $out"
}

if [[ "${1:-}" == "--render" ]]; then
  [[ $# -eq 2 ]] || die "usage: scripts/kind-e2e.sh --render DIR"
  need "$KUBECTL" "set KUBECTL, or install kubectl"
  render "$2"
  exit 0
fi

need docker "install Docker (the image is built and kind runs its nodes with it)"
need kind "go install sigs.k8s.io/kind@v0.30.0"
need "$KUBECTL" "set KUBECTL, or install kubectl (scripts/lib/k8s-tools.sh builds one)"
need npx "install Node.js 20 with npm"
docker info >/dev/null 2>&1 || die "docker cannot reach its daemon: start Docker (or run as a user who may use it)"
mkdir -p "$ARTIFACTS"
KUBECONFIG_FILE="$(cd "$ARTIFACTS" && pwd)/kubeconfig"
k() { "$KUBECTL" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

collect() {
  log "collecting logs and events into $ARTIFACTS"
  k get pods -A -o wide >"$ARTIFACTS/pods.txt" 2>&1 || true
  k get events -A --sort-by=.lastTimestamp >"$ARTIFACTS/events.txt" 2>&1 || true
  k -n "$NAMESPACE" get deployments,replicasets,services,certificates -o wide >"$ARTIFACTS/install.txt" 2>&1 || true
  local d
  for d in $(k -n "$NAMESPACE" get deployments -o name 2>/dev/null); do
    k -n "$NAMESPACE" logs "$d" --all-containers --prefix --tail=-1 >"$ARTIFACTS/${d#deployment.apps/}.log" 2>&1 || true
  done
  kind export logs "$ARTIFACTS/kind" --name "$CLUSTER" >/dev/null 2>&1 || true
  tail -n 40 "$ARTIFACTS/events.txt" >&2 || true
}

finish() {
  local status=$?
  if [[ $status -ne 0 ]]; then collect; fi
  if [[ "${KIND_KEEP:-}" == "1" ]]; then
    log "keeping cluster $CLUSTER (KUBECONFIG=$KUBECONFIG_FILE)"
  else
    kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true
  fi
  exit "$status"
}
trap finish EXIT

log "creating kind cluster $CLUSTER ($KIND_NODE_IMAGE)"
kind create cluster --name "$CLUSTER" --config e2e/kind/kind-config.yaml --image "$KIND_NODE_IMAGE" \
  --kubeconfig "$KUBECONFIG_FILE" --wait 180s

log "building $IMAGE from the Dockerfile"
docker build -t "$IMAGE" .
kind load docker-image "$IMAGE" --name "$CLUSTER"

log "installing cert-manager $CERT_MANAGER_VERSION"
k apply -f "https://github.com/cert-manager/cert-manager/releases/download/${CERT_MANAGER_VERSION}/cert-manager.yaml"
k -n cert-manager rollout status deployment/cert-manager deployment/cert-manager-cainjector \
  deployment/cert-manager-webhook --timeout=300s

log "installing metal-maintenance (kubectl apply --server-side -k e2e/kind)"
render "$ARTIFACTS"
# cert-manager's webhook answers a little after its Deployment is ready: the Issuers and
# Certificates are refused until then, so the apply is retried.
for attempt in 1 2 3 4 5 6; do
  if k apply --server-side -f "$ARTIFACTS/install.yaml"; then break; fi
  [[ $attempt -lt 6 ]] || die "the install did not apply"
  sleep 10
done
for d in "${LIFECYCLE_DEPLOYMENTS[@]}"; do
  k -n "$NAMESPACE" rollout status "deployment/metal-maintenance-$d" --timeout=300s
done

[[ -d node_modules ]] || npm ci --no-audit --no-fund
files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
  mapfile -t files < <(grep -v -e '^#' -e '^[[:space:]]*$' e2e/cluster-mode.files)
fi
log "running ${files[*]} in cluster mode"
E2E_TARGET=cluster KUBECONFIG="$KUBECONFIG_FILE" NODE_OPTIONS=--experimental-vm-modules \
  npx jest "${files[@]}" --selectProjects integration --runInBand --ci
