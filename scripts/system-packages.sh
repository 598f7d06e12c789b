#!/usr/bin/env bash
# Installs the Debian packages the runners use: iputils-ping (ICMP checks), traceroute (traceroute checks) and
# bubblewrap, chromium and chromium-headless-shell (browser and multi-step checks: Chromium's headless shell runs in
# a bubblewrap sandbox).
# `npm test` and `npm start` run this; nothing to do when all are there. As root it uses apt-get, otherwise
# `sudo -n`; without either it says what to run and exits 0 (those check types then fail saying why).
set -euo pipefail
missing=()
command -v ping >/dev/null 2>&1 || missing+=(iputils-ping)
command -v traceroute >/dev/null 2>&1 || [ -x /usr/sbin/traceroute ] || missing+=(traceroute)
[ -x /usr/bin/bwrap ] || missing+=(bubblewrap)
[ -x /usr/lib/chromium/chromium ] || missing+=(chromium)
[ -x /usr/lib/chromium/chromium-headless-shell ] || missing+=(chromium-headless-shell)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "ICMP, traceroute and browser checks need: apt-get install -y ${missing[*]} (run it as root)" >&2
  exit 0
fi
echo "installing Debian's ${missing[*]} for ICMP, traceroute and browser checks" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
}
