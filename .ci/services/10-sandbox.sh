# shellcheck shell=bash
# Sandbox services for the tests: bubblewrap (local backend), podman + runc behind a Docker-API
# socket (docker backend), and the rsi-sandbox:latest image built from a debootstrap rootfs.
# Sourced by .ci/run (set -euo pipefail is on): no `exit`, every step idempotent.
# Exports RSI_DOCKER_HOST for the docker-backend tests.
apt-get install -y -qq --no-install-recommends \
    bubblewrap podman runc debootstrap curl python3-minimal python3-pytest util-linux >/dev/null

# podman as root on these machines needs two settings (see docs/sandbox.md): root cannot raise
# ulimits past the hard cap, and crun refuses the hybrid cgroup layout. A drop-in file (rewritten
# each time, so idempotent) never clashes with tables already in containers.conf.
mkdir -p /etc/containers/containers.conf.d
cat >/etc/containers/containers.conf.d/50-rsi-sandbox.conf <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
CONF

RSI_PODMAN_SOCK=/run/rsi-podman.sock
if ! curl -sf --unix-socket "$RSI_PODMAN_SOCK" http://d/_ping >/dev/null 2>&1; then
    rm -f "$RSI_PODMAN_SOCK"
    # Started from / : conmon inherits the service's working directory and fails every container
    # ("Failed to get working directory") once that folder is gone (a deleted CI checkout).
    (cd / && exec nohup podman system service --time=0 "unix://$RSI_PODMAN_SOCK" >/var/log/rsi-podman.log 2>&1) &
    echo $! >/run/rsi-podman.pid
    for _ in $(seq 1 100); do
        curl -sf --unix-socket "$RSI_PODMAN_SOCK" http://d/_ping >/dev/null 2>&1 && break
        sleep 0.1
    done
fi
export RSI_DOCKER_HOST="unix://$RSI_PODMAN_SOCK"

# The image: ~60 s the first time, skipped when it exists.
bash scripts/build_sandbox_image.sh rsi-sandbox:latest
