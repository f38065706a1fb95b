# Sourced by the scripts that build test infrastructure into the shared cache
# ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}. The one way a cached build is published: under a
# lock, in a temporary directory, renamed into place with a `.complete` marker only when every
# binary exists, so a half-built cache is never seen and a warm one is reused as is.
#
#   cache_ready DEST BIN...   true when DEST is a finished build holding each executable BIN
#   cache_lock NAME           wait for, then hold until exit, $CACHE_ROOT/.NAME.lock (fd 9)
#   cache_workdir PREFIX      set WORK to a fresh $CACHE_ROOT/PREFIX-XXXXXX, removed on exit
#   cache_publish SRC DEST    mark SRC complete and rename it to DEST

CACHE_ROOT="${METAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-maintenance}"

cache_ready() {
  local dest="$1" b
  shift
  [[ -f "$dest/.complete" ]] || return 1
  for b in "$@"; do [[ -x "$dest/$b" ]] || return 1; done
}

cache_lock() {
  mkdir -p "$CACHE_ROOT"
  # One builder at a time: a second caller waits for the first instead of building twice.
  exec 9>"$CACHE_ROOT/.$1.lock"
  flock 9
}

cache_workdir() {
  WORK="$(mktemp -d "$CACHE_ROOT/$1-XXXXXX")"
  # shellcheck disable=SC2064 # expand now: WORK is this build's own directory
  trap "rm -rf '$WORK'" EXIT
}

cache_publish() {
  touch "$1/.complete"
  rm -rf "$2"
  mv "$1" "$2"
}
