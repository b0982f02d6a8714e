"""The trusted parent of a `script` or `pytest` verification: it runs INSIDE the sandbox, before agent code.

Started as `python3 -I -c <this source>` by the host (kinds.py), it first makes itself non-dumpable
(no process of the same uid can ptrace it or open /proc/<it>/fd or /mem), then waits on stdin for
the host's header: the host installs the verifier's files (tests/ and .rsi-verifier/, owned by
another uid and read-only) only after the sandbox has handed the working directory to the sandbox
user, and only then says go. The agent's code runs in CHILDREN of this process, whose stdout and
stderr are this process's stderr; this process alone holds the channel to the host (its stdout), on
which it writes one line: "<host nonce> " + JSON. Nothing the children print can be taken for it.

* script: run `bash tests/<script>` (this process runs as the verifier uid; `python3` and
  `rsi-solution` on the script's PATH start the solution's programs as the attempt's uid, in the
  attempt's sandbox: shim.py, launcher.py); report its exit status (as this parent saw it) and the
  first bytes of the reward file, if any.
* pytest: run `.rsi-verifier/pytest_child.py collect` (the solution replaced by an inert module: no
  agent code) for the trusted list of tests, then `... run` with two fresh pipes: one carrying a
  child nonce in, one carrying nonce-tagged outcome records out; report the list and the records.

A crash of this code is reported as {"boot_error": ...}: the host's fault, an `error` verdict.
Killing this process (agent code can: same uid) leaves the host without a report: `failed`.
"""

import json
import os
import secrets
import select
import subprocess
import sys
import time
import traceback

MAX_RECORD_BYTES = 16 * 1024 * 1024


def undumpable():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0
    except Exception:  # noqa: BLE001
        return False


def run_script(header, env):
    reward_file = os.path.abspath(header["reward_file"])  # the script may change directory
    env["RSI_REWARD_FILE"] = reward_file
    if header.get("socket"):  # the solution's programs run as the attempt's uid (shim.py)
        env["PATH"] = os.path.abspath(header["bin"]) + os.pathsep + env.get("PATH", "")
        env["RSI_VERIFIER_TOP"] = os.getcwd()
        env["RSI_SOLUTION_SOCKET"] = header["socket"]
    child = subprocess.Popen(["bash", header["script"]], stdin=subprocess.DEVNULL, stdout=2, stderr=2, env=env)
    code = child.wait()
    reward = None
    try:
        fd = os.open(reward_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            reward = os.read(fd, 64).decode("utf-8", "replace")
        finally:
            os.close(fd)
    except OSError:
        pass
    return {"exit": code, "reward": reward}


def read_records(fd, child, nonce):
    """Nonce-tagged records from `fd` until the child has exited and the pipe holds nothing more."""
    prefix = (nonce + " ").encode()
    buffer, records, size = b"", [], 0
    while True:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 1 << 16)
            size += len(chunk)
            if not chunk or size > MAX_RECORD_BYTES:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if line.startswith(prefix):
                    try:
                        records.append(json.loads(line[len(prefix):]))
                    except ValueError:
                        records.append(["<garbled>", "failed", "", "", 0])
        elif child.poll() is not None:
            break  # exited and nothing left to read (a daemon may still hold the pipe open)
    return records


def run_pytest(header, env):
    python = sys.executable
    env["RSI_SOLUTION_MODULE"] = header["module"]
    env["RSI_PYTEST_ARGS"] = json.dumps(header["pytest_args"])
    env["RSI_TESTS_DIR"] = os.path.abspath(header["tests_dir"])
    collected = subprocess.run(
        [python, "-I", header["child"], "collect"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=2, env=env
    )
    lines = collected.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        collect = json.loads(lines[-1])
    except (ValueError, IndexError):
        collect = {"exit": collected.returncode, "tests": None}
    if collected.returncode != 0 or not isinstance(collect, dict) or collect.get("exit") != 0:
        return {"collect": collect, "records": [], "exit": None}
    nonce = secrets.token_hex(16)
    nonce_read, nonce_write = os.pipe()
    records_read, records_write = os.pipe()
    os.write(nonce_write, nonce.encode() + b"\n")
    os.close(nonce_write)
    env["RSI_NONCE_FD"] = str(nonce_read)
    env["RSI_RECORDS_FD"] = str(records_write)
    child = subprocess.Popen(
        [python, "-I", header["child"], "run"],
        stdin=subprocess.DEVNULL,
        stdout=2,
        stderr=2,
        env=env,
        pass_fds=(nonce_read, records_write),
    )
    os.close(nonce_read)
    os.close(records_write)
    records = read_records(records_read, child, nonce)
    try:
        code = child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        child.kill()
        code = child.wait()
    return {"collect": collect, "records": records, "exit": code}


def main():
    protected = undumpable()
    report = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    header = json.loads(sys.stdin.readline())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    started = time.monotonic()
    try:
        env = dict(os.environ)
        result = run_script(header, env) if header["kind"] == "script" else run_pytest(header, env)
    except Exception:  # noqa: BLE001 - our own fault, reported as such
        result = {"boot_error": traceback.format_exc()[-2000:]}
    result["undumpable"] = protected
    result["boot_s"] = round(time.monotonic() - started, 3)
    report.write(header["nonce"] + " " + json.dumps(result) + "\n")
    report.flush()


main()
