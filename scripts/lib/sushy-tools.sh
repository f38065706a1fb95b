#!/usr/bin/env bash
# Prepare the sushy-tools Redfish emulator (OpenStack, from PyPI) for the Redfish conformance
# tests: a virtualenv in ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/sushy-tools-<version>/,
# never in the repository. Keyed by version; built in a temporary directory and renamed into place
# only when complete; a warm cache is reused as is.
#
# Prints the cache directory on stdout (run `<dir>/bin/python -m sushy_tools.emulator.main`);
# progress goes to stderr. Exits non-zero with what to install when a tool is missing.
set -euo pipefail

VERSION="${SUSHY_TOOLS_VERSION:-2.2.0}"
CACHE_ROOT="${METAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/metal-maintenance}"
# Bump RECIPE when the way the environment is built changes, so old caches are not reused.
RECIPE=1
DEST="$CACHE_ROOT/sushy-tools-${VERSION}-r${RECIPE}"
PYTHON="${SUSHY_PYTHON:-python3}"

log() { printf '[sushy-tools] %s\n' "$*" >&2; }

if [[ -f "$DEST/.complete" && -x "$DEST/bin/python" ]]; then
  printf '%s\n' "$DEST"
  exit 0
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
  log "MISSING TOOL: '$PYTHON' not found; sushy-tools needs Python >= 3.9 with venv and pip."
  log "Install it with 'apt-get install python3 python3-venv' (Debian/Ubuntu),"
  log "or point SUSHY_PYTHON at a python3 that has the venv module."
  exit 1
fi
if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  log "MISSING TOOL: '$PYTHON' has no venv/ensurepip module."
  log "Install it with 'apt-get install python3-venv', or point SUSHY_PYTHON at another python3."
  exit 1
fi

mkdir -p "$CACHE_ROOT"
# One builder at a time: a second caller waits for the first instead of building twice.
exec 9>"$CACHE_ROOT/.sushy-tools-build.lock"
flock 9
if [[ -f "$DEST/.complete" ]]; then
  printf '%s\n' "$DEST"
  exit 0
fi

WORK="$(mktemp -d "$CACHE_ROOT/.sushy-build-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
log "installing sushy-tools $VERSION from PyPI into $DEST"
# --copies keeps the venv valid after the rename (no absolute symlink chains into $WORK).
"$PYTHON" -m venv --copies "$WORK/venv" >&2
"$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check "sushy-tools==${VERSION}" >&2
"$WORK/venv/bin/python" -c 'import sushy_tools.emulator.main, bcrypt' >&2
touch "$WORK/venv/.complete"
rm -rf "$DEST"
mv "$WORK/venv" "$DEST"
# Entry-point scripts carry the build path in their shebang; nothing of ours uses them.
"$DEST/bin/python" -c 'import sushy_tools' >&2
printf '%s\n' "$DEST"
