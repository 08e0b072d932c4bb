#!/usr/bin/env bash
# Scaffold LangChain's agent-chat-ui (the Next.js template of npm `create-agent-chat-app`),
# install it with pinned versions and `next build` it offline. Everything lands in
# tests/js/agent_chat_ui/work/ (git-ignored); the app's source is not changed.
#
#   tests/js/agent_chat_ui/setup.sh [--force]
#
# Env: ACU_API_URL (default http://127.0.0.1:2024) and ACU_ASSISTANT_ID (default chat) are baked
# in at build time as NEXT_PUBLIC_API_URL / NEXT_PUBLIC_ASSISTANT_ID (the app's own settings).
# Network: the npm registry only (npx + npm ci). The Google font that `next/font/google` would
# fetch at build time is answered from fonts/ through NEXT_FONT_GOOGLE_MOCKED_RESPONSES.
# Skips work that is already done (stamp file); --force redoes everything.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$HERE/work"
APP="$WORK/web"
CREATE_VERSION="0.1.6"   # create-agent-chat-app (its templates/nextjs is agent-chat-ui)
API_URL="${ACU_API_URL:-http://127.0.0.1:2024}"
ASSISTANT_ID="${ACU_ASSISTANT_ID:-chat}"
STAMP_WANT="create-agent-chat-app@$CREATE_VERSION lock=$(sha256sum "$HERE/web.package-lock.json" | cut -c1-16) font=$(cat "$HERE"/fonts/* | sha256sum | cut -c1-16) api=$API_URL assistant=$ASSISTANT_ID"

if [[ "${1:-}" != "--force" && -f "$WORK/.stamp" && "$(cat "$WORK/.stamp")" == "$STAMP_WANT" && -f "$APP/.next/BUILD_ID" ]]; then
  echo "agent-chat-ui already built ($STAMP_WANT)"
  exit 0
fi

t0=$SECONDS
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
# 1. scaffold (templates ship inside the npm package; no git clone, no prompts, no install)
npx --yes "create-agent-chat-app@$CREATE_VERSION" --yes --project-name agent-chat-app \
  --package-manager npm --install-deps false --framework nextjs --include-agent react >/dev/null
# the web app alone (apps/agents is a JS LangGraph server we do not need: stepgraph serves)
mv agent-chat-app/apps/web "$APP"
rm -rf agent-chat-app
# 2. install exactly the versions of web.package-lock.json (generated from the template's
#    package.json: next 15.5.29, @langchain/langgraph-sdk 0.0.x, react 19)
cp "$HERE/web.package-lock.json" "$APP/package-lock.json"
cd "$APP"
#    The template asks for some packages at "latest" (turbo): npm ci would then refuse the lock
#    as soon as the registry publishes a newer release. Pin each such spec to the lock's version.
node -e '
const fs = require("fs");
const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
const root = lock.packages[""];
for (const field of ["dependencies", "devDependencies"]) {
  for (const [name, spec] of Object.entries(pkg[field] || {})) {
    if (spec !== "latest") continue;
    const locked = lock.packages["node_modules/" + name];
    if (!locked) throw new Error(name + " is at latest in package.json but not in the lock");
    pkg[field][name] = locked.version;
    if (root[field] && root[field][name] === "latest") root[field][name] = locked.version;
  }
}
fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");
fs.writeFileSync("package-lock.json", JSON.stringify(lock, null, 2) + "\n");
'
t1=$SECONDS
npm ci --no-audit --no-fund --loglevel=error
t2=$SECONDS
# 3. next build, offline font, local server baked in through the app's env vars
NEXT_TELEMETRY_DISABLED=1 \
NEXT_FONT_GOOGLE_MOCKED_RESPONSES="$HERE/fonts/google-fonts-mock.cjs" \
NEXT_PUBLIC_API_URL="$API_URL" \
NEXT_PUBLIC_ASSISTANT_ID="$ASSISTANT_ID" \
  node node_modules/next/dist/bin/next build
t3=$SECONDS
echo "$STAMP_WANT" > "$WORK/.stamp"
echo "agent-chat-ui ready: scaffold $((t1 - t0))s, npm ci $((t2 - t1))s, next build $((t3 - t2))s"
