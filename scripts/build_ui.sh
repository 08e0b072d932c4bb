#!/usr/bin/env bash
# Build the studio (/ui) from ui/ into src/stepgraph/server/ui_dist/ (committed: installing
# stepgraph needs no Node and the server fetches nothing at run time).
#
#   scripts/build_ui.sh           # npm ci in ui/ when needed, vite build, write build-info.json
#   scripts/build_ui.sh --check   # rebuild into a temporary copy and fail if the committed
#                                 # build differs (what CI runs)
#
# Needs Node >= 20.19 and npm (the registry only for `npm ci`, once).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
if [ ! -f ui/node_modules/.package-lock.json ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
  (cd ui && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ "${1:-}" = "--check" ]; then
  before=$(mktemp -d)
  cp -r src/stepgraph/server/ui_dist/. "$before/"
  trap 'rm -rf "$before"' EXIT
fi
(cd ui && node node_modules/vite/bin/vite.js build --logLevel warn)
python3 scripts/ui_hash.py --write >/dev/null
if [ "${1:-}" = "--check" ]; then
  if ! diff -r "$before" src/stepgraph/server/ui_dist >/dev/null; then
    diff -r "$before" src/stepgraph/server/ui_dist | head -20
    echo "the committed studio build (src/stepgraph/server/ui_dist) is not the build of ui/: run scripts/build_ui.sh and commit" >&2
    exit 1
  fi
  echo "studio build is up to date"
else
  echo "built $(ls src/stepgraph/server/ui_dist/assets | wc -l) assets into src/stepgraph/server/ui_dist ($REPO)"
fi
