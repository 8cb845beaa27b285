#!/usr/bin/env bash
# Installs the tools the deployment tests use, once: kubectl renders the Kubernetes overlays (tests/deploy),
# buildah with mmdebstrap builds the container images whose in-image checks run in CI, and prometheus brings
# promtool, which checks the alert rules (deploy/monitoring). A machine that has them is
# left alone. Needs root and apt (Debian, Ubuntu); elsewhere it says what to install, and those tests skip, each
# saying which tool it lacks.
set -euo pipefail
missing=()
for tool in kubectl buildah mmdebstrap promtool; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} = 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "setup-deploy-tools.sh: install ${missing[*]} (Debian: apt-get install ${missing[*]} uidmap) to run the deployment tests" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# uidmap gives buildah its subordinate ids; the images' own tests need nothing else from the host. promtool comes
# in Debian's prometheus package, whose server is not started.
packages=("${missing[@]/promtool/prometheus}")
# RUNLEVEL=1: the packages' scripts start no service (prometheus would otherwise start its server).
if ! RUNLEVEL=1 apt-get install -y -qq --no-install-recommends "${packages[@]}" uidmap >/dev/null; then
  echo "setup-deploy-tools.sh: apt-get could not install ${missing[*]}; the tests that need them skip and say so" >&2
fi
