#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (npm test runs this). Nothing to do when it is there.
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then exit 0; fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo -n"
else
  echo "Chromium is missing at $CHROMIUM and this user cannot install it: run 'apt-get install -y chromium' as root, or set CHROMIUM_PATH." >&2
  exit 1
fi
echo "installing Debian's chromium for the browser tests" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || {
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y --no-install-recommends chromium >/dev/null
}
"$CHROMIUM" --version >&2
