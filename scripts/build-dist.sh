#!/usr/bin/env bash
# Builds what the image holds, without a container engine, by running the Dockerfile itself: its
# build stage's COPY and RUN lines in a staging directory (for /src), then its final stage's COPY
# lines into OUT (for /app). So the steps (npm ci, tsc, npm prune --omit=dev) are the Dockerfile's,
# written once, and a file the image lacks is missing here too.
#
#   scripts/build-dist.sh [OUT]   OUT (default .tmp/app, gitignored) then holds the image's /app:
#                                 dist/ (the compiled JavaScript), node_modules/ (production only),
#                                 package.json, policies/. Run a binary as its Deployment does, from
#                                 OUT: node dist/webhook/main.js ...; `npm pack` there packs the
#                                 kubectl-metal package. Not the repository's dist/ (`npm run build`):
#                                 beside the repository's node_modules a missing production
#                                 dependency would be found among the dev ones.
#
#   scripts/build-dist.sh --digest
#                                 prints the digest of this build's inputs (every file the
#                                 Dockerfile copies from the repository, the Dockerfile and this
#                                 script); a build writes it to OUT/.inputs, so a test can tell a
#                                 stale OUT from a current one (e2e/harness/deployed.ts).
#
# Understands FROM, WORKDIR, COPY [--from=build], RUN (each as bash -c in the stage's directory),
# and ignores ENV, USER, ENTRYPOINT (the runtime's, which the tests take from the Deployments);
# any other instruction fails the build, so the Dockerfile cannot grow a step this skips. Prints OUT.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
log() { printf '[build-dist] %s\n' "$*" >&2; }

# The sources of the Dockerfile's COPY lines that copy from the repository (not --from=build).
copied_sources() {
  local instr rest words
  while IFS= read -r line || [[ -n "$line" ]]; do
    read -r instr rest <<<"$line"
    [[ "$instr" == COPY && "$rest" != --from=* ]] || continue
    # shellcheck disable=SC2206 # the Dockerfile's words: sources then destination
    words=($rest)
    printf '%s\n' "${words[@]:0:${#words[@]}-1}"
  done <"$ROOT/Dockerfile"
}

# Names and contents of every input file, hashed: any edit, addition, removal or rename changes it.
inputs_digest() {
  local -a srcs
  mapfile -t srcs < <(copied_sources)
  {
    sha256sum Dockerfile scripts/build-dist.sh
    find "${srcs[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
}

if [[ "${1:-}" == "--digest" ]]; then
  inputs_digest
  exit 0
fi
OUT="${1:-$ROOT/.tmp/app}"
# Before the build: an edit made while it runs leaves OUT marked stale rather than current.
DIGEST="$(inputs_digest)"

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/metal-build-XXXXXX")"
NEXT="$(mktemp -d "${TMPDIR:-/tmp}/metal-dist-XXXXXX")"
trap 'rm -rf "$STAGE" "$NEXT"' EXIT
stage=""
while IFS= read -r line || [[ -n "$line" ]]; do
  [[ -z "${line// /}" || "$line" =~ ^[[:space:]]*# ]] && continue
  read -r instr rest <<<"$line"
  case "$instr" in
    FROM)
      if [[ "$rest" =~ [[:space:]][Aa][Ss][[:space:]]+build$ ]]; then stage=build; else stage=final; fi
      ;;
    WORKDIR | ENV | USER | ENTRYPOINT | CMD) ;;
    COPY)
      if [[ "$rest" == --from=build* ]]; then
        read -r _ src dst <<<"$rest"
        src="$STAGE/${src#/src/}"
        mkdir -p "$(dirname "$NEXT/$dst")"
        cp -a "$src" "$NEXT/$dst"
      else
        # shellcheck disable=SC2206 # the Dockerfile's words: sources then destination
        words=($rest)
        dst="${words[-1]}"
        base="$STAGE"
        [[ "$stage" == final ]] && base="$NEXT"
        for src in "${words[@]:0:${#words[@]}-1}"; do
          mkdir -p "$(dirname "$base/$dst")"
          cp -a "$ROOT/$src" "$base/$dst"
        done
      fi
      ;;
    RUN)
      [[ "$stage" == build ]] || { log "RUN in the final stage is not supported: $rest"; exit 1; }
      log "RUN $rest"
      (cd "$STAGE" && bash -c "$rest" >&2)
      ;;
    *)
      log "the Dockerfile has an instruction this script does not run: $line"
      exit 1
      ;;
  esac
done <"$ROOT/Dockerfile"

for want in dist node_modules package.json; do
  [[ -e "$NEXT/$want" ]] || { log "the Dockerfile's final stage produced no $want"; exit 1; }
done
printf '%s\n' "$DIGEST" >"$NEXT/.inputs"
rm -rf "$OUT"
mkdir -p "$(dirname "$OUT")"
mv "$NEXT" "$OUT"
log "built $OUT"
printf '%s\n' "$OUT"
