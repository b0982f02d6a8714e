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
#   MODE=copy  skip debootstrap: copy this machine's python3, bash and libraries (also the
#              automatic fallback when debootstrap is missing or no mirror answers)
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
WORK="$(mktemp -d /var/tmp/rsi-rootfs.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
ROOTFS="$WORK/rootfs"

# Fallback when no Debian mirror is reachable: a rootfs copied from this machine's own python3,
# bash and their shared libraries (the host must be Debian-like with python3 and python3-pytest).
copy_host_rootfs() {
    rm -rf "$ROOTFS"
    mkdir -p "$ROOTFS"/{etc,tmp,work,usr/bin,usr/lib}
    for dir in bin sbin lib lib64; do ln -s "usr/$dir" "$ROOTFS/$dir"; done
    mkdir -p "$ROOTFS/usr/sbin" "$ROOTFS/usr/lib64"
    local binaries="/usr/bin/python3 /usr/bin/bash /usr/bin/dash"
    for tool in env cat ls true false sleep mkdir rm cp mv head tail grep sed wc sort diff timeout; do
        [ -x "/usr/bin/$tool" ] && binaries="$binaries /usr/bin/$tool"
    done
    local real
    for bin in $binaries; do
        real="$(readlink -f "$bin")"
        cp -a "$real" "$ROOTFS$real"
        [ "$real" = "$bin" ] || ln -sf "$real" "$ROOTFS$bin"
        ldd "$real" | awk '/=>/ {print $3} /^\t\/lib/ {print $1}' | while read -r lib; do
            [ -n "$lib" ] && [ -e "$lib" ] || continue
            mkdir -p "$ROOTFS$(dirname "$(readlink -f "$lib")")" "$ROOTFS$(dirname "$lib")"
            cp -aL "$lib" "$ROOTFS$lib" 2>/dev/null || true
        done
    done
    ln -sf dash "$ROOTFS/usr/bin/sh"
    local pyver
    pyver="$(/usr/bin/python3 -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')"
    cp -a "/usr/lib/$pyver" "$ROOTFS/usr/lib/"
    [ -d /usr/lib/python3/dist-packages ] && mkdir -p "$ROOTFS/usr/lib/python3" \
        && cp -a /usr/lib/python3/dist-packages "$ROOTFS/usr/lib/python3/"
    # python needs its dynamic modules' libraries too (ssl, ffi, sqlite, ...).
    find "$ROOTFS/usr/lib/$pyver/lib-dynload" -name '*.so' -print0 | xargs -0 -r ldd 2>/dev/null \
        | awk '/=>/ {print $3}' | sort -u | while read -r lib; do
            [ -n "$lib" ] && [ -e "$lib" ] || continue
            mkdir -p "$ROOTFS$(dirname "$lib")"
            cp -aL "$lib" "$ROOTFS$lib" 2>/dev/null || true
        done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$ROOTFS/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOTFS/etc/group"
    chmod 1777 "$ROOTFS/tmp"
}

if [ "${MODE:-debootstrap}" = copy ]; then
    copy_host_rootfs
elif command -v debootstrap >/dev/null \
    && debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
    :
else
    echo "debootstrap unavailable or failed (see below); copying this machine's python3 instead" >&2
    tail -5 "$WORK/debootstrap.log" 2>/dev/null >&2 || true
    copy_host_rootfs
fi
# Smaller image: documentation, caches and apt lists are not needed to run attempt code.
rm -rf "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/* \
       "$ROOTFS"/var/cache/apt/* "$ROOTFS"/var/lib/apt/lists/*
mkdir -p "$ROOTFS/work"
chmod 0777 "$ROOTFS/work"
tar -C "$ROOTFS" -c . | "$ENGINE" import \
    --change 'WORKDIR /work' --change 'USER 65534:65534' --change 'CMD ["/usr/bin/python3"]' \
    - "$IMAGE" >/dev/null
echo "built $IMAGE"
