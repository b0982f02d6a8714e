"""The sandbox backends, for real: pipes, limits, tree kills, and hostile code that must stay inside.

Every test runs against each local mode (bwrap, namespaces, userns, bare) and docker (podman) where
the property applies; the isolation-only properties (no host files, no network, no hidden paths)
run on the backends whose `Isolation` promises them, and the bare mode is checked to say plainly
that it does not.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from rsi.errors import SandboxError, UserInputError
from rsi.sandbox.base import Limits
from rsi.sandbox.select import make_sandbox
from tests.sandbox.conftest import LOCAL_MODES, host_ip


def py(sandbox, code: str) -> list[str]:
    return [sandbox.python, "-I", "-c", code]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# -- basics ------------------------------------------------------------------------------------------


def test_run_passes_stdin_and_returns_output_and_exit_code(backend, workdir: Path):
    result = backend.run(
        py(backend, "import sys; data = sys.stdin.read(); print(data.upper()); print('e', file=sys.stderr); sys.exit(3)"),
        workdir,
        Limits(wall_s=20),
        stdin="hello sandbox",
    )
    assert result.exit_code == 3
    assert result.stdout.strip() == "HELLO SANDBOX"
    assert result.stderr.strip() == "e"
    assert not result.timed_out
    assert result.isolation.backend in ("local-bwrap", "local-namespaces", "local-userns", "local-bare", "docker")


def test_workdir_is_writable_and_files_come_back(backend, workdir: Path):
    (workdir / "given.txt").write_text("from host")
    result = backend.run(
        py(backend, "import os; t = open('given.txt').read(); open('made.txt', 'w').write(t + ' and back'); print(os.getuid())"),
        workdir,
        Limits(wall_s=20),
    )
    assert result.exit_code == 0, result.stderr
    assert (workdir / "made.txt").read_text() == "from host and back"
    if os.geteuid() == 0:  # never root on the host: a fresh uid per run locally, 65534 in docker
        uid = int(result.stdout)
        if backend.isolation().backend == "local-userns":  # root of its own user namespace
            assert uid == 0 and (workdir / "made.txt").stat().st_uid >= 2_000_000_000
        else:
            assert uid >= 2_000_000_000 if backend.name == "local" else uid == 65534


def test_environment_is_scrubbed(backend, workdir: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("PYTHONPATH", "/tmp/hijack")
    result = backend.run(
        py(backend, "import os, json; print(json.dumps(dict(os.environ)))"), workdir, Limits(wall_s=20), env={"EXTRA": "1"}
    )
    assert result.exit_code == 0, result.stderr
    assert "sk-secret-value" not in result.stdout
    assert "PYTHONPATH" not in result.stdout
    assert '"EXTRA": "1"' in result.stdout
    assert '"HOME"' in result.stdout


def test_output_is_capped(backend, workdir: Path):
    result = backend.run(py(backend, "import sys\nfor _ in range(64): sys.stdout.write('x' * 65536)"), workdir, Limits(wall_s=20))
    assert result.exit_code == 0
    assert len(result.stdout) < 2 * 1024 * 1024
    assert "truncated" in result.stdout


def test_start_gives_a_live_process_with_pipes(backend, workdir: Path):
    proc = backend.start(
        py(backend, "import sys\nfor line in sys.stdin:\n    print('echo:' + line.strip(), flush=True)"), workdir, Limits(wall_s=30)
    )
    try:
        for word in ("one", "two"):
            proc.stdin.write(f"{word}\n".encode())
            proc.stdin.flush()
            assert proc.stdout.readline().decode().strip() == f"echo:{word}"
        assert proc.poll() is None
        proc.stdin.close()
        assert proc.wait(15) == 0
    finally:
        proc.kill()
    proc.kill()  # idempotent


def test_wall_clock_limit_stops_run(backend, workdir: Path):
    started = time.monotonic()
    result = backend.run(py(backend, "while True: pass"), workdir, Limits(wall_s=1.5))
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 10


def test_wall_clock_limit_stops_started_process(backend, workdir: Path):
    proc = backend.start(py(backend, "import time; time.sleep(600)"), workdir, Limits(wall_s=1.5))
    try:
        assert proc.wait(15) is not None
        assert proc.timed_out
    finally:
        proc.kill()


def test_the_wall_clock_kill_ends_a_read_in_progress_with_end_of_stream(backend, workdir: Path):
    """The owner waits on stdout with select + os.read (as the cases verifier does) while the wall
    clock fires: it must see end of stream, never a descriptor closed under it (EBADF, or a number
    another thread's file could reuse)."""
    import select

    proc = backend.start(py(backend, "import time; time.sleep(600)"), workdir, Limits(wall_s=1.0))
    try:
        fd = proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], 15)
        assert ready, "no end of stream after the wall-clock kill"
        assert os.read(fd, 100) == b""
        assert proc.timed_out
    finally:
        proc.kill()


def test_empty_command_and_missing_workdir_are_sandbox_errors(backend, open_tmp: Path):
    with pytest.raises(SandboxError):
        backend.run([], open_tmp, Limits())
    with pytest.raises(SandboxError):
        backend.run(py(backend, "pass"), open_tmp / "missing", Limits())


def test_unknown_backend_name_is_user_input_error():
    with pytest.raises(UserInputError, match="unknown sandbox backend"):
        make_sandbox("kubernetes")


def test_auto_picks_the_strongest_mode_that_works_here():
    from rsi.sandbox.local import MODES, probe_mode

    sandbox = make_sandbox("auto")
    strongest = next(mode for mode in MODES if probe_mode(mode)[0])
    assert sandbox.isolation().backend == f"local-{strongest}"
    passed_over = MODES[: MODES.index(strongest)]
    assert [line.split(":")[0] for line in sandbox.skipped] == list(passed_over)
    assert make_sandbox("local", use_bwrap=False).isolation().backend != "local-bwrap"


def test_bare_mode_says_what_it_does_not_isolate():
    iso = make_sandbox("local", mode="bare").isolation()
    assert (iso.network_isolated, iso.filesystem_readonly, iso.pid_namespace) == (False, False, False)
    assert iso.weak and iso.model_dump()["weak"] is True
    assert "WEAK" in iso.notes and "network are reachable" in iso.notes


def test_only_the_bare_mode_is_weak(isolating_backend):
    iso = isolating_backend.isolation()
    assert not iso.weak and iso.network_isolated and iso.filesystem_readonly and iso.pid_namespace


def test_a_mode_asked_for_but_unusable_is_an_error_not_a_downgrade(monkeypatch):
    from rsi.sandbox import local

    monkeypatch.setattr(local, "probe_mode", lambda mode: (False, "not on this machine"))
    with pytest.raises(SandboxError, match="not on this machine"):
        local.LocalSandbox(mode="namespaces")


def test_docker_with_missing_image_is_a_sandbox_error(backends, workdir: Path):
    from tests.sandbox.conftest import make_backend

    base = backends.get("docker") or make_backend("docker")
    broken = make_sandbox("docker", base_url=base.base_url, image="rsi-no-such-image:never")
    with pytest.raises(SandboxError, match="not found"):
        broken.run(["true"], workdir, Limits())


# -- limits and tree kills -----------------------------------------------------------------------------


def test_memory_bomb_is_contained(backend, workdir: Path):
    result = backend.run(
        py(backend, "blocks = []\nwhile True: blocks.append(bytearray(16 * 1024 * 1024))"),
        workdir,
        Limits(wall_s=20, memory_mb=256),
    )
    assert result.exit_code not in (0, None) or result.timed_out
    assert "MemoryError" in result.stderr or result.exit_code in (137, -9) or result.timed_out


def test_file_size_limit(backend, workdir: Path):
    result = backend.run(
        py(backend, "f = open('big', 'wb')\nfor _ in range(64): f.write(b'x' * 1024 * 1024)"),
        workdir,
        Limits(wall_s=20, file_size_mb=2),
    )
    assert result.exit_code != 0
    assert (workdir / "big").stat().st_size <= 2 * 1024 * 1024


def test_fork_bomb_is_contained_and_fully_killed(backend, workdir: Path):
    code = (
        "import os, time\n"
        "open('bomb.pid', 'a').write(f'{os.getpid()}\\n')\n"
        "while True:\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            try: open('bomb.pid', 'a').write(f'{os.getpid()}\\n')\n"
        "            except OSError: pass\n"
        "    except OSError:\n"
        "        time.sleep(0.01)\n"
    )
    started = time.monotonic()
    result = backend.run(py(backend, code), workdir, Limits(wall_s=3, processes=32))
    assert result.timed_out
    assert time.monotonic() - started < 20
    if backend.name == "local":
        time.sleep(0.3)
        pids = {int(p) for p in (workdir / "bomb.pid").read_text().split()} if (workdir / "bomb.pid").exists() else set()
        if backend.isolation().pid_namespace:
            pids = set()  # pids inside the namespace mean nothing outside; the namespace is gone
        assert not [p for p in pids if pid_alive(p)]


def test_fork_bomb_does_not_starve_a_concurrent_sandbox(workdir: Path, open_tmp: Path):
    """RLIMIT_NPROC counts per uid host-wide; fresh per-run uids keep one bomb from blocking others."""
    if os.geteuid() != 0:
        pytest.skip("per-run uids are only used when rsi runs as root")
    import threading

    sandbox = make_sandbox("local")
    bomb = "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass\n"
    thread = threading.Thread(target=sandbox.run, args=(py(sandbox, bomb), workdir, Limits(wall_s=3, processes=16)))
    thread.start()
    try:
        time.sleep(0.8)  # the bomb has hit its process limit by now
        other = open_tmp / "other"
        other.mkdir()
        result = sandbox.run(
            py(sandbox, "import subprocess, sys; print(subprocess.run([sys.executable, '-c', 'print(7)'], capture_output=True, text=True).stdout.strip())"),
            other,
            Limits(wall_s=10, processes=16),
        )
        assert result.exit_code == 0, result.stderr
        assert result.stdout.strip() == "7"
    finally:
        thread.join(20)


def test_setsid_daemon_does_not_outlive_run(backend, workdir: Path):
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        while True:\n"
        "            open('beat', 'w').write(str(time.time()))\n"
        "            time.sleep(0.05)\n"
        "    os._exit(0)\n"
        "while not os.path.exists('beat'):\n"
        "    time.sleep(0.02)\n"
    )
    result = backend.run(py(backend, code), workdir, Limits(wall_s=10))
    assert result.exit_code == 0
    time.sleep(0.3)
    first = (workdir / "beat").read_text()
    time.sleep(0.5)
    assert (workdir / "beat").read_text() == first, "a daemon kept running after run() returned"


def test_kill_kills_the_whole_started_tree(backend, workdir: Path):
    code = (
        "import os, subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time\\nwhile True:\\n    open(\"beat\", \"w\").write(str(time.time())); time.sleep(0.05)'], start_new_session=True)\n"
        "while not os.path.exists('beat'):\n"
        "    time.sleep(0.02)\n"
        "print('up', flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = backend.start(py(backend, code), workdir, Limits(wall_s=60))
    assert proc.stdout.readline().strip() == b"up"
    time.sleep(0.3)
    proc.kill()
    time.sleep(0.3)
    first = (workdir / "beat").read_text()
    time.sleep(0.5)
    assert (workdir / "beat").read_text() == first
    assert proc.poll() is not None


# -- hostile code against the isolating backends --------------------------------------------------------


def test_cannot_read_hidden_paths_or_host_secrets(isolating_backend, workdir: Path, open_tmp: Path):
    hidden = open_tmp / "task" / "tests"
    hidden.mkdir(parents=True)
    (hidden / "cases.json").write_text('{"secret": 42}')
    (hidden / "cases.json").chmod(0o644)
    (open_tmp / "task").chmod(0o755)
    hidden.chmod(0o755)
    code = (
        "import os\n"
        f"targets = [{str(hidden / 'cases.json')!r}, '/etc/shadow', '/root/.bashrc', {str(Path(__file__))!r}]\n"
        "for t in targets:\n"
        "    try:\n"
        "        print('READ', t, open(t).read()[:20])\n"
        "    except OSError as e:\n"
        "        print('DENIED', t, type(e).__name__)\n"
    )
    result = isolating_backend.run(py(isolating_backend, code), workdir, Limits(wall_s=20))
    assert result.exit_code == 0, result.stderr
    assert "READ" not in result.stdout
    assert result.stdout.count("DENIED") == 4


def test_cannot_write_outside_workdir(isolating_backend, workdir: Path, open_tmp: Path):
    outside = open_tmp / "outside"
    outside.mkdir()
    outside.chmod(0o777)  # writable by anyone on the host: only the sandbox can stop the write
    victim = Path(__file__).parent / "conftest.py"
    before = hashlib.sha256(victim.read_bytes()).hexdigest()
    code = (
        "import os\n"
        f"for t in [{str(outside / 'pwned')!r}, '/tmp/pwned-by-sandbox', '/etc/pwned', '/usr/pwned', {str(victim)!r}]:\n"
        "    try:\n"
        "        open(t, 'a').write('x')\n"
        "        print('WROTE', t)\n"
        "    except OSError as e:\n"
        "        print('DENIED', t, type(e).__name__)\n"
    )
    result = isolating_backend.run(py(isolating_backend, code), workdir, Limits(wall_s=20))
    assert result.exit_code == 0, result.stderr
    assert not (outside / "pwned").exists()
    assert not Path("/etc/pwned").exists() and not Path("/usr/pwned").exists()
    assert hashlib.sha256(victim.read_bytes()).hexdigest() == before


def test_no_network_to_host_listener(isolating_backend, workdir: Path, listener):
    code = (
        "import socket\n"
        f"for host in ['127.0.0.1', {host_ip()!r}]:\n"
        "    try:\n"
        f"        socket.create_connection((host, {listener.port}), timeout=2).close()\n"
        "        print('CONNECTED', host)\n"
        "    except OSError as e:\n"
        "        print('BLOCKED', host, type(e).__name__)\n"
    )
    result = isolating_backend.run(py(isolating_backend, code), workdir, Limits(wall_s=20))
    assert result.exit_code == 0, result.stderr
    assert "CONNECTED" not in result.stdout
    time.sleep(0.3)
    assert listener.connections == []


def test_killing_its_parent_and_the_host_does_not_work(isolating_backend, workdir: Path):
    code = (
        "import os, signal, sys\n"
        f"for pid in [os.getppid(), {os.getpid()}, 1]:\n"
        "    try:\n"
        "        os.kill(pid, signal.SIGKILL)\n"
        "        print('SENT', pid)\n"
        "    except OSError as e:\n"
        "        print('REFUSED', pid, type(e).__name__)\n"
        "print('still here')\n"
    )
    result = isolating_backend.run(py(isolating_backend, code), workdir, Limits(wall_s=20))
    # We are still alive (this line runs), and the sandbox reports the child normally or killed.
    assert pid_alive(os.getpid())
    assert not result.timed_out


def test_bare_mode_as_root_still_drops_to_nobody(workdir: Path):
    if os.geteuid() != 0:
        pytest.skip("the drop to nobody only happens when rsi runs as root")
    sandbox = make_sandbox("local", mode="bare")
    result = sandbox.run(
        py(sandbox, "import os\ntry:\n    open('/etc/shadow').read(); print('READ')\nexcept OSError: print('DENIED')\nprint(os.getuid())"),
        workdir,
        Limits(wall_s=20),
    )
    denied, uid = result.stdout.split()
    assert denied == "DENIED" and int(uid) >= 2_000_000_000
    assert sandbox.isolation().unprivileged_user
    nobody = make_sandbox("local", mode="bare", uid=65534)
    assert nobody.run(py(nobody, "import os; print(os.getuid())"), workdir, Limits(wall_s=20)).stdout.strip() == "65534"


def test_chown_of_workdir_never_follows_planted_links(backend, workdir: Path, open_tmp: Path):
    if os.geteuid() != 0:
        pytest.skip("ownership is only handed over when running as root")
    target = open_tmp / "root-owned.txt"
    target.write_text("keep me")
    (workdir / "link").symlink_to(target)
    result = backend.run(py(backend, "print('ok')"), workdir, Limits(wall_s=20))
    assert result.exit_code == 0
    assert target.stat().st_uid == 0


def test_docker_containers_of_a_killed_orchestrator_are_swept(backends, workdir: Path):
    """An orchestrator SIGKILLed mid-attempt leaves its container; the next launch removes it."""
    import subprocess
    import sys

    from tests.sandbox.conftest import make_backend

    base = backends.get("docker") or make_backend("docker")
    marker = f"orphan-{os.getpid()}-{time.monotonic_ns()}"
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from rsi.sandbox.select import make_sandbox\n"
        "from rsi.sandbox.base import Limits\n"
        f"sb = make_sandbox('docker', base_url={base.base_url!r})\n"
        f"proc = sb.start(['sleep', '600'], Path({str(workdir)!r}), Limits(wall_s=1), env={{'MARK': {marker!r}}})\n"
        "print(proc.container_id, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    container_id = done.stdout.strip()
    assert done.returncode == -9 and container_id, done.stderr
    client = base.client()
    assert client.containers.get(container_id).status == "running"  # orphaned, still running
    time.sleep(1.5)
    sweeper = make_sandbox("docker", base_url=base.base_url, orphan_grace_s=0)
    assert sweeper.run(["true"], workdir, Limits(wall_s=20)).exit_code == 0
    import docker

    with pytest.raises(docker.errors.NotFound):
        client.containers.get(container_id)


@pytest.mark.parametrize("name", LOCAL_MODES)
def test_local_sandbox_dies_with_a_sigkilled_orchestrator(name: str, backends, workdir: Path):
    import subprocess
    import sys

    from tests.sandbox.conftest import make_backend

    backends.get(name) or make_backend(name)  # skips (fails in CI) where the mode is missing
    mode = name.removeprefix("local-")
    beat = "import time\nwhile True:\n    open('beat', 'w').write(str(time.time())); time.sleep(0.05)\n"
    script = (
        "import os, signal, time\n"
        "from pathlib import Path\n"
        "from rsi.sandbox.select import make_sandbox\n"
        "from rsi.sandbox.base import Limits\n"
        f"sb = make_sandbox('local', mode={mode!r})\n"
        f"proc = sb.start([sb.python, '-c', {beat!r}], Path({str(workdir)!r}), Limits(wall_s=600))\n"
        f"while not Path({str(workdir / 'beat')!r}).exists(): time.sleep(0.05)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == -9, done.stderr
    time.sleep(0.5)
    first = (workdir / "beat").read_text()
    time.sleep(0.6)
    assert (workdir / "beat").read_text() == first, "the sandboxed process outlived its orchestrator"
