# Sourced by metal-mock.sh and metal-operator.sh: the pinned metal-operator release both build
# from the Go module proxy, and the one way they put a build into the shared cache.
#
#   source scripts/lib/metal-operator-common.sh
#   mo_cached_or_build NAME DEST build_fn     # prints DEST; build_fn OUT builds into OUT
#   mo_module_dir                             # the module's source in the Go module cache
#
# A build runs under flock in a temporary directory beside the cache and is renamed into place only
# when complete (.complete written last); a warm cache is reused, a half-built one never is.

MO_VERSION="${METAL_MOCK_VERSION:-v0.7.0}"
MO_MODULE="github.com/ironcore-dev/metal-operator"
CACHE_ROOT="${METAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-maintenance}"

mo_require_go() {
  if ! command -v go >/dev/null 2>&1; then
    log "MISSING TOOL: no Go toolchain; metal-operator $MO_VERSION is built from the Go module proxy."
    log "Install Go >= 1.26 (https://go.dev/doc/install, or 'apt-get install golang-go' if recent enough)."
    exit 1
  fi
}

# The directory holding metal-operator's source at MO_VERSION (downloaded into the Go module cache
# if needed): its config/crd/bases and config/rbac are read by the tests, never copied.
mo_module_dir() {
  mo_require_go
  local dir
  dir="$(GOFLAGS=-mod=mod go mod download -json "$MO_MODULE@$MO_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  if [[ -z "$dir" || ! -f "$dir/go.mod" ]]; then
    log "could not resolve $MO_MODULE@$MO_VERSION in the Go module cache (go mod download failed?)"
    exit 1
  fi
  printf '%s\n' "$dir"
}

mo_cached_or_build() {
  local name="$1" dest="$2" build_fn="$3"
  if [[ -f "$dest/.complete" ]]; then
    printf '%s\n' "$dest"
    return 0
  fi
  mo_require_go
  mkdir -p "$CACHE_ROOT"
  # One builder at a time per peer: a second caller waits for the first instead of building twice.
  exec 9>"$CACHE_ROOT/.$name-build.lock"
  flock 9
  if [[ -f "$dest/.complete" ]]; then
    printf '%s\n' "$dest"
    return 0
  fi
  WORK="$(mktemp -d "$CACHE_ROOT/.$name-build-XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
  mkdir -p "$WORK/out"
  export GOFLAGS="${GOFLAGS:--buildvcs=false}"
  export CGO_ENABLED=0
  "$build_fn" "$WORK/out"
  printf '%s\n' "$MO_VERSION" >"$WORK/out/VERSION"
  touch "$WORK/out/.complete"
  rm -rf "$dest"
  mv "$WORK/out" "$dest"
  log "built $dest"
  printf '%s\n' "$dest"
}
