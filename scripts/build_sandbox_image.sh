#!/usr/bin/env bash
# Build the container image the `docker` sandbox backend runs attempts in (default rsi-sandbox:latest).
#
# No registry is needed: a minimal Debian rootfs with python3 (and pytest, for `pytest` verifier
# kinds) is made with debootstrap and imported into podman (or docker). Skips the build when the image
# already exists unless FORCE=1.
#
#   scripts/build_sandbox_image.sh [IMAGE]        e.g. rsi-sandbox:latest
#   ENGINE=docker scripts/build_sandbox_image.sh  use docker instead of podman
#   MIRROR=http://deb.debian.org/debian SUITE=bookworm  (defaults)
set -euo pipefail
IMAGE="${1:-${RSI_SANDBOX_IMAGE:-rsi-sandbox:latest}}"
ENGINE="${ENGINE:-podman}"
SUITE="${SUITE:-bookworm}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
PACKAGES="python3-minimal,python3-pytest"

if [ "${FORCE:-0}" != "1" ] && "$ENGINE" image exists "$IMAGE" 2>/dev/null; then
    echo "image $IMAGE exists (FORCE=1 rebuilds)"
    exit 0
fi
if [ "$ENGINE" = docker ] && [ "${FORCE:-0}" != "1" ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "image $IMAGE exists (FORCE=1 rebuilds)"
    exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }

WORK="$(mktemp -d /var/tmp/rsi-rootfs.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
ROOTFS="$WORK/rootfs"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
# Smaller image: documentation, caches and apt lists are not needed to run attempt code.
rm -rf "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/* \
       "$ROOTFS"/var/cache/apt/* "$ROOTFS"/var/lib/apt/lists/*
mkdir -p "$ROOTFS/work"
chmod 0777 "$ROOTFS/work"
tar -C "$ROOTFS" -c . | "$ENGINE" import \
    --change 'WORKDIR /work' --change 'USER 65534:65534' --change 'CMD ["/usr/bin/python3"]' \
    - "$IMAGE" >/dev/null
echo "built $IMAGE"
