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
# Chromium's headless shell (what browser checks run by default) is wanted, not required: without it they run in the
# full Chromium. Installed on its own, so a repository without it fails nothing else.
optional=()
[ -x /usr/lib/chromium/chromium-headless-shell ] || optional+=(chromium-headless-shell)
if [ ${#missing[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "ICMP, traceroute and browser checks need: apt-get install -y ${missing[*]} ${optional[*]} (run it as root)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian's ${missing[*]} for ICMP, traceroute and browser checks" >&2
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
  }
fi
if [ ${#optional[@]} -gt 0 ]; then
  echo "installing Debian's ${optional[*]} for browser checks" >&2
  $SUDO apt-get install -y --no-install-recommends "${optional[@]}" >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y --no-install-recommends "${optional[@]}" >/dev/null 2>&1; } ||
    echo "Debian's ${optional[*]} could not be installed: browser checks run in the full Chromium" >&2
fi
