"""Issue 12's containment promises, checked from the host on every backend this machine has.

- Every descendant dies with the attempt: a double-forked daemon (setsid, closed descriptors,
  sleeps, then rewrites a file in the working directory) is gone when run() / kill() returns.
  "Gone" is checked on the host's /proc by a marker in the daemon's command line, not assumed.
- Memory is capped per attempt where a cgroup can be had: eight processes allocating 4 GB in all
  under memory_mb=1024 are stopped near 1 GB, measured by summing their resident memory on the
  host while they run (and, as a control, the same attempt without the cgroup goes far past it).
- What an isolating mode must hide is absent: the hidden tests, runs/, other processes.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from pathlib import Path

import pytest

from rsi.sandbox.base import Limits
from rsi.sandbox.select import make_sandbox
from tests.sandbox.conftest import make_backend


def py(sandbox, code: str) -> list[str]:
    return [sandbox.python, "-I", "-c", code]


def marked_pids(marker: str) -> list[int]:
    """Host pids of live (not zombie) processes whose command line holds `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def daemon_code(marker: str, sleep_s: float) -> str:
    """A double-forked daemon: setsid, every descriptor closed, sleeps, then rewrites `evidence`."""
    inner = (
        f"import time; time.sleep({sleep_s}); open('evidence', 'w').write('rewritten by a daemon') # {marker}"
    )
    return (
        "import os, subprocess, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        for fd in range(3, 256):\n"
        "            try: os.close(fd)\n"
        "            except OSError: pass\n"
        "        null = os.open(os.devnull, os.O_RDWR)\n"
        "        for fd in (0, 1, 2): os.dup2(null, fd)\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', {inner!r}])\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "open('evidence', 'w').write('original')\n"
        "print('daemon started', flush=True)\n"
    )


def wait_for(predicate, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_double_forked_daemon_is_dead_when_run_returns(backend, workdir: Path):
    marker = f"rsi-daemon-{secrets.token_hex(6)}"
    result = backend.run(py(backend, daemon_code(marker, 2.0)), workdir, Limits(wall_s=20))
    assert result.exit_code == 0, result.stderr
    assert "daemon started" in result.stdout
    assert marked_pids(marker) == [], "a process of the attempt outlived run()"
    time.sleep(2.5)  # past the daemon's sleep: had it survived, it would have rewritten the file
    assert (workdir / "evidence").read_text() == "original"


def test_a_double_forked_daemon_is_dead_when_kill_returns(backend, workdir: Path):
    marker = f"rsi-daemon-{secrets.token_hex(6)}"
    code = daemon_code(marker, 2.0) + "import time; time.sleep(600)\n"
    proc = backend.start(py(backend, code), workdir, Limits(wall_s=60))
    try:
        assert proc.stdout.readline().strip() == b"daemon started"
        assert wait_for(lambda: marked_pids(marker), 10), "the daemon never showed up on the host"
    finally:
        proc.kill()
    assert marked_pids(marker) == [], "a process of the attempt outlived kill()"
    time.sleep(2.5)
    assert (workdir / "evidence").read_text() == "original"


def test_nothing_of_the_attempts_uid_is_left(backend, workdir: Path):
    """As root each launch has a fresh uid: after run() no process of that uid may be alive."""
    if os.geteuid() != 0 or backend.name != "local":
        pytest.skip("fresh per-run uids exist only for the local backend run as root")
    from rsi.sandbox._reap import uid_members

    code = daemon_code(f"rsi-uid-{secrets.token_hex(6)}", 30.0)
    result = backend.run(py(backend, code), workdir, Limits(wall_s=20))
    assert result.exit_code == 0, result.stderr
    owner = (workdir / "evidence").stat().st_uid
    assert owner >= 2_000_000_000
    assert uid_members(owner) == []


# -- memory per attempt ---------------------------------------------------------------------------------

HOG = (
    "import subprocess, sys\n"
    "child = ('import time\\nblocks = []\\n'\n"
    "         'for _ in range(8): blocks.append(bytearray(b\"\\\\x01\") * (64 << 20))\\n'\n"
    "         'time.sleep(4)  # MARKER')\n"
    "procs = [subprocess.Popen([sys.executable, '-c', child.replace('MARKER', sys.argv[1])]) for _ in range(8)]\n"
    "print([p.wait() for p in procs], flush=True)\n"
)


def resident_mb(marker: str) -> float:
    total = 0
    for pid in marked_pids(marker):
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def peak_resident_mb(sandbox, workdir: Path, limits: Limits) -> tuple[float, object]:
    """Run the 8 x 512 MB hog and sample the summed RSS of its processes on the host every 20 ms."""
    marker = f"rsi-hog-{secrets.token_hex(6)}"
    peak = 0.0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, resident_mb(marker))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = sandbox.run([*py(sandbox, HOG), marker], workdir, limits)
    finally:
        done.set()
        sampler.join(5)
    return peak, result


@pytest.mark.slow
def test_an_attempt_of_eight_processes_is_capped_near_its_memory_limit(backend, workdir: Path):
    if not backend.isolation().memory_per_attempt:
        from tests.conftest import need

        need(False, f"a memory cgroup for {backend.isolation().backend} ({backend.isolation().notes[-160:]})")
    limits = Limits(wall_s=60, memory_mb=1024, processes=32)
    peak, result = peak_resident_mb(backend, workdir, limits)
    assert peak > 300, f"the hog never allocated (peak {peak:.0f} MB): {result.stderr[-500:]}"
    assert peak < 1024 * 1.25, f"4 GB asked under memory_mb=1024: peak {peak:.0f} MB on the host"
    assert "0, 0, 0, 0, 0, 0, 0, 0" not in result.stdout, "every process kept its 512 MB"


@pytest.mark.slow
def test_without_a_cgroup_the_same_attempt_goes_past_the_limit(workdir: Path):
    """The control: the measurement above can fail. Per-process limits alone let 8 x 512 MB through."""
    sandbox = make_backend("local-namespaces") if os.geteuid() == 0 else make_sandbox("local")
    uncapped = make_sandbox("local", mode=sandbox.mode, memory_cgroup=False)
    assert not uncapped.isolation().memory_per_attempt
    assert "only per-process memory limits hold" in uncapped.isolation().notes
    peak, result = peak_resident_mb(uncapped, workdir, Limits(wall_s=60, memory_mb=1024, processes=32))
    assert peak > 2048, f"expected ~4 GB without a cgroup, measured {peak:.0f} MB: {result.stderr[-300:]}"


def test_files_in_the_private_tmp_are_capped_too(isolating_backend, workdir: Path):
    if isolating_backend.name != "local":
        pytest.skip("the docker backend's /tmp is its own tmpfs (tmpfs_mb)")
    code = (
        "import os\n"
        "written = 0\n"
        "try:\n"
        "    with open('/tmp/fill', 'wb') as fh:\n"
        "        while written < (1536 << 20):\n"
        "            fh.write(b'x' * (16 << 20)); written += 16 << 20\n"
        "except OSError as error:\n"
        "    print('STOPPED', type(error).__name__)\n"
        "print(written >> 20)\n"
    )
    limits = Limits(wall_s=60, memory_mb=256, file_size_mb=4096)
    result = isolating_backend.run(py(isolating_backend, code), workdir, limits)
    written = int(result.stdout.split()[-1]) if result.stdout.split() else 0
    assert result.exit_code != 0 or "STOPPED" in result.stdout, result.stdout
    assert written <= 256 + 16, f"{written} MB landed in a 256 MB attempt's /tmp"


# -- what an isolating mode hides ----------------------------------------------------------------------


def test_hidden_tests_runs_and_other_processes_do_not_exist_inside(isolating_backend, workdir: Path):
    repo = Path(__file__).resolve().parents[2]
    targets = [repo / "tasks" / "pyfuncs" / "add-two" / "tests" / "cases.json", repo / "runs", repo / "rsi"]
    code = (
        "import os\n"
        f"for t in {[str(t) for t in targets]!r}:\n"
        "    print('SEEN' if os.path.exists(t) else 'ABSENT', t)\n"
        "print('PIDS', len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
    )
    result = isolating_backend.run(py(isolating_backend, code), workdir, Limits(wall_s=20))
    assert result.exit_code == 0, result.stderr
    assert "SEEN" not in result.stdout, result.stdout
    pids = int(result.stdout.split("PIDS")[1])
    assert pids <= 3, f"{pids} processes visible inside: the host's PIDs leak in"


def test_python_with_pytest_is_offered_or_refused_plainly(backend):
    from rsi.errors import SandboxError

    try:
        python = backend.python_with("pytest")
    except SandboxError as error:
        assert "pytest" in error.message and error.hint
        assert backend.isolation().backend in ("local-bare", "local-userns", "docker"), error.message
        return
    assert python.startswith("/")
    assert backend.python_with("pytest") == python  # cached, same answer


# -- the user-namespace mode as a normal user ------------------------------------------------------------

NORMAL_USER_SCRIPT = """
import json, sys
from pathlib import Path
from rsi.sandbox.base import Limits
from rsi.sandbox.select import make_sandbox
hidden, port, marker, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
sandbox = make_sandbox("local", mode="userns")  # explicitly: with bubblewrap present, auto would pick bwrap
code = (
    "import os, socket\\n"
    f"print('SEEN' if os.path.exists({hidden!r}) else 'ABSENT')\\n"
    "try:\\n"
    f"    socket.create_connection(('127.0.0.1', {port}), timeout=2); print('CONNECTED')\\n"
    "except OSError: print('BLOCKED')\\n"
)
result = sandbox.run([sandbox.python, "-I", "-c", code + sys.argv[5]], work, Limits(wall_s=30))
print(json.dumps({"backend": result.isolation.backend, "weak": result.isolation.weak, "out": result.stdout,
                  "err": result.stderr, "exit": result.exit_code}))
"""


def test_the_user_namespace_mode_isolates_for_a_normal_user(open_tmp: Path, listener):
    """rsi run by an unprivileged user (here uid 65534, switched to by the test) gets `userns` where
    the kernel allows it: hidden files, the host's loopback and a daemon's survival all stopped."""
    import json
    import subprocess
    import sys

    if os.geteuid() != 0:
        pytest.skip("needs root to switch to a normal user (as a normal user the backend fixture covers it)")
    from rsi.sandbox.local import system_python

    python = system_python()
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    repo = Path(__file__).resolve().parents[2]
    if python is None or not site.is_dir():
        pytest.skip("no system python3 and venv site-packages to run rsi as a normal user")
    hidden = open_tmp / "hidden.json"
    hidden.write_text('{"secret": 1}')
    hidden.chmod(0o644)  # readable by the normal user on the host: only the sandbox can hide it
    work = open_tmp / "work"
    work.mkdir()
    os.chown(work, 65534, 65534)
    marker = f"rsi-daemon-{secrets.token_hex(6)}"
    command = [
        "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "-i", "PATH=/usr/bin:/bin",
        "HOME=/tmp", f"PYTHONPATH={site}:{repo}", python, "-c", NORMAL_USER_SCRIPT,
        str(hidden), str(listener.port), marker, str(work), daemon_code(marker, 2.0),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if "userns" not in done.stdout:
        from tests.conftest import need

        need(False, f"unprivileged user namespaces for uid 65534 ({done.stdout[-300:]} {done.stderr[-300:]})")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["backend"] == "local-userns" and not report["weak"], report
    assert report["exit"] == 0, report["err"]
    assert "ABSENT" in report["out"] and "BLOCKED" in report["out"] and "daemon started" in report["out"], report
    assert marked_pids(marker) == [], "the daemon outlived run() in the user-namespace mode"
    time.sleep(0.3)
    assert listener.connections == []
    time.sleep(2.5)
    assert (work / "evidence").read_text() == "original"
