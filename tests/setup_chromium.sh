#!/bin/sh
# Installs Debian's chromium for the reporter's browser test (tests/test_report_browser.py).
# Safe to call every time: does nothing when a chromium binary is already on PATH.
# Needs root (apt-get); without root it says so and exits 0, and the test then skips with that reason.
set -eu
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "setup_chromium: $(command -v "$b") already installed"
    exit 0
  fi
done
if [ "$(id -u)" != "0" ]; then
  echo "setup_chromium: not root, cannot apt-get install chromium" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "setup_chromium: installed $(command -v chromium)"
