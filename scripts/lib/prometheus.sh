#!/usr/bin/env bash
# Prometheus and promtool from Debian's `prometheus` package, for the alert-rule tests and the e2e
# suite that scrapes every binary: the .deb is fetched with `apt-get download` and unpacked with
# dpkg-deb into ${METAL_CACHE_DIR:-~/.cache/metal-maintenance}/prometheus-<version>/ (no root install,
# no service: the harness starts it). Keyed by the package version; built under a lock in a
# temporary directory and published with a .complete marker; a warm cache is reused as is.
#
#   scripts/lib/prometheus.sh    prints the directory holding `prometheus` and `promtool`
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/build-cache.sh"

log() { printf '[prometheus] %s\n' "$*" >&2; }

# The newest cached build of any version answers offline runs quickly.
for d in "$CACHE_ROOT"/prometheus-*/; do
  if [[ -z "${PROMETHEUS_DEB_VERSION:-}" ]] && cache_ready "$d" prometheus promtool; then
    printf '%s\n' "${d%/}"
    exit 0
  fi
done

for tool in apt-get apt-cache dpkg-deb; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    log "MISSING TOOL: $tool; Prometheus comes from Debian's 'prometheus' package (apt-get download)."
    log "Run on Debian/Ubuntu, or put prometheus and promtool (>= 2.42) in $CACHE_ROOT/prometheus-<version>/ with a .complete file."
    exit 1
  fi
done
VERSION="${PROMETHEUS_DEB_VERSION:-$(apt-cache policy prometheus | sed -n 's/^ *Candidate: //p')}"
if [[ -z "$VERSION" || "$VERSION" == "(none)" ]]; then
  log "MISSING PACKAGE: apt knows no 'prometheus' package; run 'apt-get update' first."
  exit 1
fi
DEST="$CACHE_ROOT/prometheus-${VERSION//[:+~]/_}"
if cache_ready "$DEST" prometheus promtool; then
  printf '%s\n' "$DEST"
  exit 0
fi
cache_lock prometheus-build
if cache_ready "$DEST" prometheus promtool; then
  printf '%s\n' "$DEST"
  exit 0
fi
cache_workdir .prometheus-build
log "fetching Debian's prometheus $VERSION into $DEST"
# apt's sandbox user cannot write our directory; the download itself is the same either way.
(cd "$WORK" && apt-get download -q "prometheus=$VERSION" >&2 2> >(grep -v 'unsandboxed' >&2))
dpkg-deb -x "$WORK"/prometheus_*.deb "$WORK/root"
mkdir -p "$WORK/out"
mv "$WORK/root/usr/bin/prometheus" "$WORK/root/usr/bin/promtool" "$WORK/out/"
printf '%s\n' "$VERSION" >"$WORK/out/VERSION"
cache_publish "$WORK/out" "$DEST"
log "unpacked $DEST"
printf '%s\n' "$DEST"
