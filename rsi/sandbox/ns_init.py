"""PID 1 of a namespace sandbox: build a minimal root, start the attempt, reap, and exit with it.

Standard library only: `rsi.sandbox.namespaces` passes this file's SOURCE to
`unshare --mount --pid --net --ipc --uts [--user --map-root-user] --fork --kill-child --
python3 -I -S -c SOURCE CONFIG -- setpriv ... -- COMMAND`, so it runs as (namespace) root inside
fresh namespaces and never imports anything from the project. It runs on every launch, so it
imports only cheap modules (CONFIG is marshal, hex-encoded; no json, socket or platform). It
builds, like bubblewrap does:

    /                tmpfs, read-only once built (only mount points and links live there)
    /usr /etc ...    read-only binds (and the merged-/usr links bin, lib, lib64, sbin ...)
    <extra>          read-only binds at their own paths (the project's Python, for pytest)
    /proc            a fresh proc for the new PID namespace
    /dev             tmpfs with null, zero, full, random, urandom, tty bound; shm a capped tmpfs
    /tmp             private tmpfs, size-capped
    <workdir>        the working directory, read-write, at its own path (parents 0755)

Sources are opened (O_PATH) before anything is mounted, and bound from /proc/self/fd/N, so no
mount can hide another's source whatever the paths are. Then pivot_root into the new root, the
old one detached. The attempt runs as PID 2: `setpriv` drops to the per-run uid (root mode) or
just drops every capability (user-namespace mode), with no_new_privs, rlimits set just before.
This PID 1 writes "ok" on the status descriptor once the root is built (anything else, or EOF,
means the sandbox could not be set up: an infrastructure error), reaps orphans, and exits with
the attempt's status (128+N for a signal), which takes every other process of the namespace with it.
"""

import ctypes
import marshal
import os
import resource
import signal
import struct
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
# statvfs flag -> mount flag, for flags a user namespace must keep when remounting a bind.
LOCKED_FLAGS = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: 1024, 2048: 2048, 4096: 1 << 21}
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
STAGE = "/tmp"  # where the new root is assembled (a private mount: the host's /tmp is untouched)
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
RLIMITS = {
    "cpu": resource.RLIMIT_CPU, "as": resource.RLIMIT_AS, "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE, "nproc": resource.RLIMIT_NPROC, "core": resource.RLIMIT_CORE,
}
libc = ctypes.CDLL(None, use_errno=True)


def fail(status_fd, what):
    os.write(status_fd, f"error {what}\n".encode()[:4000])
    os._exit(125)


def check(result, what):
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def mount(source, target, fstype, flags, data=None):
    check(
        libc.mount(
            None if source is None else source.encode(), target.encode(),
            None if fstype is None else fstype.encode(), ctypes.c_ulong(flags),
            None if data is None else data.encode(),
        ),
        f"mount {source} on {target}",
    )


def kept_flags(path):
    """The flags of the mount holding `path` that a remount must keep (locked in a user namespace)."""
    have = os.statvfs(path).f_flag
    flags = 0
    for st_flag, ms_flag in LOCKED_FLAGS.items():
        if have & st_flag:
            flags |= ms_flag
    return flags


def submounts(target):
    """Mount points at or below `target` (from mountinfo), deepest last."""
    found = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            point = line.split()[4].encode().decode("unicode_escape")
            if point == target or point.startswith(target.rstrip("/") + "/"):
                found.append(point)
    return found


def bind(fd, target, read_only, extra_flags=0):
    source = f"/proc/self/fd/{fd}"
    mount(source, target, None, MS_BIND | MS_REC)
    for point in submounts(target):
        flags = MS_REMOUNT | MS_BIND | kept_flags(point) | extra_flags | (MS_RDONLY if read_only else 0)
        mount(None, point, None, flags)


def makedirs(path):
    """mkdir -p inside the new root, every level 0755 (the sandbox user must traverse them)."""
    parts = [p for p in path.split("/") if p]
    current = STAGE
    for part in parts:
        current = f"{current}/{part}"
        if not os.path.isdir(current):
            os.mkdir(current)
            os.chmod(current, 0o755)
    return current


def tmpfs(target, mode, size_mb, extra=0):
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | extra, f"mode={mode},size={size_mb}m")


def build_dev(fds):
    dev = makedirs("/dev")
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for name in DEV_NODES:
        if name in fds:
            open(f"{dev}/{name}", "w").close()
            mount(f"/proc/self/fd/{fds[name]}", f"{dev}/{name}", None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")


def loopback_up():
    """Bring `lo` up in the new network namespace (as bubblewrap does): local servers keep working.
    Through libc rather than the socket module, whose import costs more than the whole setup."""
    sock = libc.socket(2, 2, 0)  # AF_INET, SOCK_DGRAM
    check(0 if sock >= 0 else -1, "socket")
    try:
        request = ctypes.create_string_buffer(struct.pack("16sH14x", b"lo", 0), 32)
        check(libc.ioctl(sock, 0x8913, request), "SIOCGIFFLAGS lo")
        flags = struct.unpack("16sH14x", request.raw)[1]
        request = ctypes.create_string_buffer(struct.pack("16sH14x", b"lo", flags | 1), 32)  # IFF_UP
        check(libc.ioctl(sock, 0x8914, request), "SIOCSIFFLAGS lo")
    finally:
        os.close(sock)


def pivot(stage):
    os.chdir(stage)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        check(libc.chroot(b"."), "chroot")
    else:
        check(libc.syscall(number, b".", b"."), "pivot_root")
        check(libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def build_root(config):
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    fds = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in [*config["ro"], config["workdir"]]}
    for name in DEV_NODES:
        if os.path.exists(f"/dev/{name}"):
            fds[name] = os.open(f"/dev/{name}", os.O_PATH | os.O_CLOEXEC)
    tmpfs(STAGE, "0755", 1)
    for link, target in config["links"].items():
        os.symlink(target, f"{STAGE}{link}")
    # The new file systems first, the binds after: a bind below /tmp (a workdir there) must sit on
    # top of the private /tmp, not under it.
    mount("proc", makedirs("/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    build_dev(fds)
    tmpfs(makedirs("/dev/shm"), "1777", config["tmp_mb"])
    tmpfs(makedirs("/tmp"), "1777", config["tmp_mb"])
    for path in config["ro"]:
        bind(fds[path], makedirs(path), read_only=True, extra_flags=MS_NOSUID | MS_NODEV)
    bind(fds[config["workdir"]], makedirs(config["workdir"]), read_only=False, extra_flags=MS_NOSUID | MS_NODEV)
    for fd in fds.values():
        os.close(fd)
    check(libc.sethostname(b"sandbox", 7), "sethostname")
    loopback_up()
    pivot(STAGE)


def start_attempt(config, status_fd):
    """The child: rlimits, default signal dispositions, the uid drop, exec. Never returns."""
    try:
        for name, (soft, hard) in config["rlimits"].items():
            resource.setrlimit(RLIMITS[name], (soft, hard))
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; the attempt must not
            signal.signal(sig, signal.SIG_DFL)
        try:
            with open("/proc/self/oom_score_adj", "w") as fh:
                fh.write("0")
        except OSError:
            pass
        os.chdir(config["workdir"])
        os.write(status_fd, b"ok\n")
        os.close(status_fd)
        argv = sys.argv[3:]  # after CONFIG and "--": setpriv ... -- the attempt's command
        os.execv(argv[0], argv)
    except BaseException as error:  # noqa: BLE001 - reported, then the child ends
        sys.stderr.write(f"rsi sandbox: could not start the command: {error}\n")
    os._exit(127)


def main():
    config = marshal.loads(bytes.fromhex(sys.argv[1]))
    if os.path.exists("/proc/self/oom_score_adj"):
        try:  # the OOM killer of the attempt's memory group picks attempt processes, never PID 1
            with open("/proc/self/oom_score_adj", "w") as fh:
                fh.write("-1000")
        except OSError:
            pass  # not allowed in a user namespace
    status_fd = config["status_fd"]
    try:
        build_root(config)
    except OSError as error:
        fail(status_fd, f"setting up the namespace sandbox failed: {error}")
    child = os.fork()
    if child == 0:
        start_attempt(config, status_fd)
    os.close(status_fd)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(125)
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
