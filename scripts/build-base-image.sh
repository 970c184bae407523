#!/usr/bin/env bash
# Build a small local Python base image without a registry: debootstrap a Debian
# minbase rootfs with python3 and git, then `docker import` it.
#
# The documented way to get a base image on a machine with no registry (docs/install.md):
# `python -m starter run` refuses a DURABENCH_BASE_IMAGE it can neither find nor pull,
# and names this script. Needs root (debootstrap) and an apt mirror.
#
# Usage: scripts/build-base-image.sh [TAG]   (default: durabench-base:bookworm)
#        export DURABENCH_BASE_IMAGE=TAG
# Skips the build when the tag already exists.
set -euo pipefail

tag="${1:-durabench-base:bookworm}"
suite="${DEBIAN_SUITE:-bookworm}"

# The Debian mirror this machine's apt already uses, unless DEBIAN_MIRROR says otherwise.
apt_mirror() {
  awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null ||
    true
  awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true
}
mirror="${DEBIAN_MIRROR:-$(apt_mirror | head -n 1)}"

if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "base image $tag already present"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install debootstrap" >&2; exit 1; }
[ -n "$mirror" ] || { echo "no Debian mirror found in apt's sources; set DEBIAN_MIRROR" >&2; exit 1; }

rootfs="$(mktemp -d /tmp/durabench-rootfs.XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT
echo "debootstrap $suite from $mirror into $rootfs (about a minute)"
debootstrap --variant=minbase --include=python3,git,ca-certificates "$suite" "$rootfs" "$mirror" >/tmp/durabench-debootstrap.log 2>&1 \
  || { tail -20 /tmp/durabench-debootstrap.log >&2; exit 1; }
ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' \
  - "$tag"
echo "built $tag"
