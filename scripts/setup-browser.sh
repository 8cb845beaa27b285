#!/usr/bin/env bash
# Installs the distribution's Chromium and chromedriver for the web leaderboard's browser test
# (tests/web/test_browser.py), once: a machine that has both is left alone. Needs root and apt (Debian, Ubuntu);
# elsewhere it says what to install, and the browser test skips outside CI.
set -euo pipefail
if command -v chromedriver >/dev/null && { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "setup-browser.sh: install Chromium and chromedriver (Debian: apt-get install chromium chromium-driver) to run the browser test" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq chromium chromium-driver >/dev/null
