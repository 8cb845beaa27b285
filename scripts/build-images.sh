#!/usr/bin/env bash
# Builds the two container images into local buildah storage: kernel-arena-runner:<tag> and
# kernel-arena-service:<tag> (deploy/images/README.md).
#
#   scripts/build-images.sh [--variant cpu|cuda] [--tag T]
#
# cpu (the default): both images stand on a Debian bookworm base that this script makes itself with mmdebstrap
#   (minimal, plus python3), from Debian's packages: no container registry is needed. The base's tarball is kept
#   under $ARENA_IMAGE_CACHE (default ~/.cache/kernel-arena/images), named by a hash of its recipe, so a second
#   build starts from it; remove it to take Debian's newest packages. The runner gets the CPU build of torch.
# cuda: the runner stands on NVIDIA's CUDA development image (CUDA_BASE) and gets torch for CUDA 13.0 from
#   PyTorch's index; pulling that base needs a registry. The service image is the same as for cpu.
#
# Python packages come from the package index through pip, configured as on this machine: its find-links, local
# indexes and constraints are mounted read-only into the build stage (deploy/images/host_pip.py), so a local CPU
# torch wheel is the one installed. Builds use `buildah build --isolation chroot --layers`, so an unchanged step
# is not run again. Needs root (or a user with subordinate ids), buildah, and for cpu mmdebstrap.
# Prints each image's name, size and build time; BUILD_TIMES_FILE, when set, gets the same lines.
set -euo pipefail
cd "$(dirname "$0")/.."

variant=cpu
tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --variant) variant=${2:?--variant needs cpu or cuda}; shift 2 ;;
    --variant=*) variant=${1#*=}; shift ;;
    --tag) tag=${2:?--tag needs a value}; shift 2 ;;
    --tag=*) tag=${1#*=}; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-images.sh: unknown argument $1 (use --variant cpu|cuda, --tag T)" >&2; exit 2 ;;
  esac
done
case "$variant" in
  cpu|cuda) ;;
  *) echo "build-images.sh: --variant is cpu or cuda, not $variant" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-python3}
# The project's version, from pyproject.toml: the tag the Kubernetes manifests name (never `latest`).
if [ -z "$tag" ]; then
  tag=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -1)
fi
for tool in buildah $([ "$variant" = cpu ] && echo mmdebstrap); do
  command -v "$tool" >/dev/null || {
    echo "build-images.sh: $tool is missing (Debian: apt-get install $tool uidmap, or scripts/setup-deploy-tools.sh)" >&2
    exit 2
  }
done

# The two images and their cached layers take about 4 GB (the CUDA variant three times that); stop before a full disk
# does, and say where the space is wanted.
storage=$(buildah info --format '{{.store.GraphRoot}}' 2>/dev/null || echo /var/lib/containers/storage)
needed_gb=$([ "$variant" = cpu ] && echo 6 || echo 20)
existing=$storage
while [ ! -d "$existing" ]; do existing=$(dirname "$existing"); done
free_kb=$(df -k --output=avail "$existing" 2>/dev/null | tail -1 | tr -d ' ')
if [ -n "$free_kb" ] && [ "$free_kb" -lt $((needed_gb * 1024 * 1024)) ]; then
  echo "build-images.sh: $((free_kb / 1024 / 1024)) GB free where buildah stores images ($storage); the $variant build" \
    "needs about $needed_gb GB. Free some (buildah rmi --prune removes dangling layers) and build again." >&2
  exit 2
fi

CUDA_BASE=${CUDA_BASE:-docker.io/nvidia/cuda:13.0.2-devel-ubuntu24.04}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
cache=${ARENA_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kernel-arena/images}
mkdir -p "$cache"
# One build at a time per cache: two would make the same base and race on the same tags.
exec 9>"$cache/.lock"
flock 9

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

log() { echo "build-images.sh: $*" >&2; }

# The Debian base: what both images need from the distribution (the images' own steps install nothing more), with
# no documentation, manual pages or translations. mmdebstrap removes apt's lists and caches itself.
debian_base() {
  local recipe hash image tarball
  recipe=(
    --variant=minbase
    --include=python3,python3-venv,ca-certificates,tini
    --dpkgopt='path-exclude=/usr/share/man/*'
    --dpkgopt='path-exclude=/usr/share/doc/*'
    --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --dpkgopt='path-exclude=/usr/share/locale/*'
    --dpkgopt='path-exclude=/usr/share/info/*'
    bookworm
  )
  local sources=(
    "deb $DEBIAN_MIRROR bookworm main"
    "deb $DEBIAN_MIRROR bookworm-updates main"
    "deb $DEBIAN_SECURITY_MIRROR bookworm-security main"
  )
  hash=$(printf '%s\n' "${recipe[@]}" "${sources[@]}" | sha256sum | cut -c1-12)
  image=localhost/kernel-arena-base:bookworm-$hash
  tarball=$cache/debian-bookworm-$hash.tar
  if buildah inspect --type image "$image" >/dev/null 2>&1; then
    echo "$image"
    return
  fi
  if [ ! -s "$tarball" ]; then
    log "making the Debian base with mmdebstrap (a minute or two; kept as $tarball)"
    local started=$SECONDS
    command -v mmdebstrap >/dev/null || { log "mmdebstrap is missing: it makes the Debian base"; return 1; }
    mmdebstrap --quiet "${recipe[@]}" "$work/base.tar" "${sources[@]}" >&2 || { log "mmdebstrap failed"; return 1; }
    mv "$work/base.tar" "$tarball"
    local line="debian base $(du -m "$tarball" | cut -f1) MB tarball made in $((SECONDS - started)) s"
    log "$line"
    [ -z "${BUILD_TIMES_FILE:-}" ] || echo "$line" >> "$BUILD_TIMES_FILE"
  fi
  local container
  container=$(buildah from scratch)
  # Whatever happens, the working container goes: it is only a step towards the image.
  if buildah add --quiet "$container" "$tarball" / >/dev/null \
    && buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --env LANG=C.UTF-8 --cmd /bin/bash "$container" \
    && buildah commit --quiet "$container" "$image" >/dev/null; then
    buildah rm "$container" >/dev/null
  else
    buildah rm "$container" >/dev/null
    log "could not import $tarball as $image"
    return 1
  fi
  echo "$image"
}

# pip as configured here, for the build stages: the merged configuration as /etc/pip.conf, and every local path
# it names mounted read-only where the configuration expects it.
volumes=()
"$PYTHON" deploy/images/host_pip.py config "$work/pip.conf" > "$work/pip-paths"
if [ -s "$work/pip.conf" ]; then
  volumes+=(--volume "$work/pip.conf:/etc/pip.conf:ro")
  while read -r path; do
    volumes+=(--volume "$path:$path:ro")
  done < "$work/pip-paths"
fi

if [ "$variant" = cpu ]; then
  base=$(debian_base)
  runner_base=$base
  pull=(--pull=false)
  torch_version=${TORCH_VERSION:-2.13.0}
  # The CPU build of torch: a local wheel where pip's configuration has one, else PyTorch's CPU index.
  if wheel=$("$PYTHON" deploy/images/host_pip.py wheel torch "$torch_version+cpu"); then
    log "torch: $wheel"
    torch_index=${TORCH_INDEX_URL:-}
  else
    torch_index=${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}
  fi
  torch_args=(
    --build-arg "TORCH_VERSION=$torch_version" --build-arg "TORCH_INDEX_URL=$torch_index"
    --build-arg TRITON_VERSION= --build-arg TORCH_CUDA=none --build-arg NSIGHT_COMPUTE_PACKAGE=
  )
else
  base=$(debian_base 2>/dev/null) || base=docker.io/library/debian:bookworm-slim
  runner_base=$CUDA_BASE
  pull=()
  torch_args=()
  [ -z "${TORCH_VERSION:-}" ] || torch_args+=(--build-arg "TORCH_VERSION=$TORCH_VERSION")
  [ -z "${TORCH_INDEX_URL:-}" ] || torch_args+=(--build-arg "TORCH_INDEX_URL=$TORCH_INDEX_URL")
fi

# The build context: a snapshot of what the images take from the checkout, so that both passes of a build (and both
# images) see the same files while the checkout changes under them.
context=$work/context
mkdir -p "$context"
tar -cf - --exclude=__pycache__ --exclude='*.pyc' pyproject.toml README.md api arena bot contract core problems runner web \
  deploy/images/system-packages.sh | tar -xf - -C "$context"

# Each image in two passes, so that no trace of the host's pip configuration reaches it: the build stage alone,
# with that configuration mounted, and then the whole file without it. The second pass takes the build stage's
# steps from the first one's layers (volumes are not part of a step's cache key); it must not run pip again.
build() {  # build NAME CONTAINERFILE BASE [ARGS...]
  local name=$1 file=$2 from=$3 started line
  shift 3
  started=$(date +%s)
  local common=(--isolation chroot --layers --force-rm "${pull[@]}" --file "$PWD/$file" --build-arg "BASE=$from" "$@")
  log "building $name:$tag from $from"
  if [ ${#volumes[@]} -gt 0 ] && ! buildah build "${common[@]}" "${volumes[@]}" --target build "$context" \
    > "$work/$name.build.log" 2>&1; then
    tail -n 40 "$work/$name.build.log" >&2
    log "the build stage of $name:$tag failed (the last lines of its log are above)"
    return 1
  fi
  if ! buildah build "${common[@]}" --tag "$name:$tag" "$context" > "$work/$name.log" 2>&1; then
    tail -n 40 "$work/$name.log" >&2
    log "building $name:$tag failed (the last lines of its log are above)"
    return 1
  fi
  if [ ${#volumes[@]} -gt 0 ] && grep -q "^Successfully installed" "$work/$name.log"; then
    log "the second pass of $name:$tag ran pip again, without this machine's pip configuration: the cached build" \
      "stage was not reused. Build again; if it persists, remove the dangling images (buildah rmi --prune)."
    return 1
  fi
  line="$name:$tag $(buildah images --format '{{.Size}}' "localhost/$name:$tag") built in $(($(date +%s) - started)) s"
  echo "$line"
  [ -z "${BUILD_TIMES_FILE:-}" ] || echo "$line" >> "$BUILD_TIMES_FILE"
}

build kernel-arena-runner deploy/images/Containerfile.runner "$runner_base" "${torch_args[@]}"
build kernel-arena-service deploy/images/Containerfile.service "$base"
