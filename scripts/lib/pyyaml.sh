#!/usr/bin/env bash
# A small virtualenv with PyYAML (from PyPI) for the install tests: PyYAML reads YAML 1.1, as
# `kubectl apply -f` and Helm do, so parsing every generated file with it shows a scalar a 1.1
# reader would retype (a plain On read as true). Into
# ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/pyyaml-<version>-r<recipe>/, never into the
# repository; built in a temporary directory and renamed into place only when complete
# (scripts/lib/build-cache.sh), reused when warm. Prints that directory on stdout (run
# `<dir>/bin/python`); progress goes to stderr.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/build-cache.sh
source "$HERE/build-cache.sh"
VERSION="${PYYAML_VERSION:-6.0.3}"
# Bump RECIPE when the way the environment is built changes, so old caches are not reused.
RECIPE=1
DEST="$CACHE_ROOT/pyyaml-${VERSION}-r${RECIPE}"
PYTHON="${PYYAML_PYTHON:-python3}"

log() { printf '[pyyaml] %s\n' "$*" >&2; }

if cache_ready "$DEST" bin/python; then
  printf '%s\n' "$DEST"
  exit 0
fi

if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  log "MISSING TOOL: '$PYTHON' with the venv module; PyYAML $VERSION is installed from PyPI into a venv."
  log "Install it with 'apt-get install python3 python3-venv', or point PYYAML_PYTHON at another python3."
  exit 1
fi

cache_lock pyyaml-build
if cache_ready "$DEST" bin/python; then
  printf '%s\n' "$DEST"
  exit 0
fi

cache_workdir .pyyaml-build
log "installing PyYAML $VERSION from PyPI into $DEST"
# --copies keeps the venv valid after the rename (no absolute symlink chains into $WORK).
"$PYTHON" -m venv --copies "$WORK/venv" >&2
"$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check "PyYAML==${VERSION}" >&2
"$WORK/venv/bin/python" -c 'import yaml; print("PyYAML", yaml.__version__)' >&2
cache_publish "$WORK/venv" "$DEST"
log "installed $DEST"
printf '%s\n' "$DEST"
