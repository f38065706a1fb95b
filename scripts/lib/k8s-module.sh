# Sourced by the scripts that build Kubernetes components (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl) from the Go module proxy, so every one is built from the same
# k8s.io/kubernetes version, pinned the same way and stamped with the same version.
#
#   k8s_write_module DIR NAME PKG...  a go.mod requiring k8s.io/kubernetes $K8S_VERSION (staging
#                                     modules pinned) and a tools.go importing each PKG
#   k8s_ldflags                       the -ldflags a release build stamps /version with

K8S_VERSION="${K8S_VERSION:-v1.34.4}"

# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local paths,
# which is ignored for a dependency; pin each staging module to the matching published tag.
K8S_STAGING=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
  cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
  kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
  mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller)

k8s_write_module() {
  local dir="$1" name="$2" m p
  shift 2
  mkdir -p "$dir"
  {
    echo "module metal-maintenance.invalid/testbins/$name"
    echo
    echo "go 1.24"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    for m in "${K8S_STAGING[@]}"; do echo "	k8s.io/$m => k8s.io/$m v0.${K8S_VERSION#v1.}"; done
    echo ")"
  } >"$dir/go.mod"
  {
    echo "//go:build tools"
    echo
    echo "package tools"
    echo
    for p in "$@"; do echo "import _ \"$p\""; done
  } >"$dir/tools.go"
}

# Stamp the version the way the Kubernetes release build does, so /version and client skew
# checks see v1.x.y instead of v0.0.0-master.
k8s_ldflags() {
  local minor="${K8S_VERSION#v1.}"
  minor="${minor%%.*}"
  printf '%s' "-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION}" \
    " -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}" \
    " -X k8s.io/component-base/version.gitTreeState=clean"
}
