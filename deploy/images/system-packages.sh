#!/bin/sh
# Installs the distribution packages named on the command line that the base image lacks, and nothing else: the
# Debian base that scripts/build-images.sh makes already holds them all (so the build needs no package mirror),
# while NVIDIA's CUDA image or debian:bookworm-slim gets the missing ones from its own apt sources. Recommends are
# skipped and apt's lists and caches removed in the same step, so no layer keeps them.
set -eu
missing=""
for package in "$@"; do
  if ! dpkg-query -W -f '${db:Status-Status}' "$package" 2>/dev/null | grep -qx installed; then
    missing="$missing $package"
  fi
done
if [ -z "$missing" ]; then
  exit 0
fi
echo "system-packages.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log
