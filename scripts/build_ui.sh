#!/usr/bin/env bash
# Build the studio (/ui) from ui/ into src/stepgraph/server/ui_dist/. The build is committed, so
# installing stepgraph needs no Node and the server fetches nothing at run time.
#
#   scripts/build_ui.sh           # npm ci in ui/ when needed, vite build, write build-info.json
#   scripts/build_ui.sh --check   # build into a temporary folder and fail if it differs from
#                                 # the committed build (the committed files are not touched)
#
# Needs Node >= 20.19 and npm (the registry only for `npm ci`, once).
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=src/stepgraph/server/ui_dist
if [ ! -f ui/node_modules/.package-lock.json ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
  (cd ui && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ "${1:-}" = "--check" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  (cd ui && node node_modules/vite/bin/vite.js build --logLevel warn --outDir "$out" --emptyOutDir)
  if ! diff -r -x build-info.json "$out" "$DIST" >/dev/null; then
    diff -r -x build-info.json "$out" "$DIST" | head -20
    echo "the committed studio build ($DIST) is not the build of ui/: run scripts/build_ui.sh and commit it" >&2
    exit 1
  fi
  python3 scripts/ui_hash.py --verify
  echo "studio build is up to date"
else
  (cd ui && node node_modules/vite/bin/vite.js build --logLevel warn)
  python3 scripts/ui_hash.py --write >/dev/null
  echo "built $(ls "$DIST/assets" | wc -l) assets into $DIST"
fi
