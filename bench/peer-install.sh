#!/usr/bin/env bash
# The peer stack the runner bench measures the service against: Debian's Prometheus and blackbox_exporter, the
# packages a self-hosting user would install. Unpacked (not installed: no services started, nothing of the
# system changed) into bench/.peer once; the bench runs the two binaries itself on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")"
PEER=.peer
if [ -x "$PEER/usr/bin/prometheus" ] && [ -x "$PEER/usr/bin/prometheus-blackbox-exporter" ]; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
( cd "$work" && apt-get download prometheus prometheus-blackbox-exporter >/dev/null 2>&1 ) || {
  echo "apt-get download prometheus prometheus-blackbox-exporter failed (is the Debian mirror reachable?)" >&2
  exit 1
}
mkdir -p "$PEER"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$PEER"; done
"$PEER/usr/bin/prometheus" --version 2>&1 | head -n 1 >&2
"$PEER/usr/bin/prometheus-blackbox-exporter" --version 2>&1 | head -n 1 >&2
