"""The solution launcher of a `script` verification: it runs INSIDE the attempt's sandbox, as the
attempt's uid, and starts the solution's programs on behalf of the test script.

The test script runs in a second sandbox as a verifier uid (kinds.py); the files it trusts (tests/,
the reward file) are unreadable by the attempt's uid. When the script runs `python3 ...` (or
`rsi-solution CMD ...`), the trusted shim on its PATH (shim.py) connects here over a Unix socket in
the shared working directory and sends the command line, the working directory, the environment
(minus rsi's own variables) and its stdin, stdout and stderr as descriptors (SCM_RIGHTS). This
process starts the command with exactly those three descriptors, in a session of its own, waits,
and answers "exit N"; if the shim goes away first (a `timeout` in the script), the command's
process group is killed. The solution's processes therefore see the script only through what it
handed them: argv, environment, the three descriptors and the working directory.

Started as `python3 -I -c <this source>` by the host, before the verifier files exist. It reads one
header line on stdin ({"socket": name, "nonce": n}), binds the socket (relative to its working
directory: the shared one), and writes "<nonce> ready" on stdout. Standard library only.

Nothing here is trusted by the verdict: agent code runs as this uid and may kill or impersonate
this process; it then only decides what its own programs print and return, which it decides anyway.
"""

import array
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading

MAX_REQUEST_BYTES = 1 << 20


def receive(conn):
    """(request dict, [fd0, fd1, fd2]) from the shim, or (None, fds) when malformed."""
    fds = array.array("i")
    data, ancillary, _flags, _addr = conn.recvmsg(MAX_REQUEST_BYTES, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    while not data.endswith(b"\n") and len(data) < MAX_REQUEST_BYTES:
        more = conn.recv(MAX_REQUEST_BYTES - len(data))
        if not more:
            break
        data += more
    try:
        request = json.loads(data)
    except ValueError:
        return None, list(fds)
    ok = isinstance(request, dict) and isinstance(request.get("argv"), list) and request["argv"]
    return (request if ok and len(fds) == 3 else None), list(fds)


def child_env(request):
    env = {str(k): str(v) for k, v in (request.get("env") or {}).items() if not str(k).startswith("RSI_")}
    env["PATH"] = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    return env


def serve(conn):
    fds = []
    try:
        request, fds = receive(conn)
        if request is None:
            conn.sendall(b"exit 126\n")
            return
        cwd = request.get("cwd")
        cwd = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else os.getcwd()
        try:
            child = subprocess.Popen(
                [str(a) for a in request["argv"]], stdin=fds[0], stdout=fds[1], stderr=fds[2], cwd=cwd,
                env=child_env(request), start_new_session=True, close_fds=True,
            )
        except OSError as error:
            os.write(fds[2], f"{request['argv'][0]}: {error.strerror}\n".encode())
            conn.sendall(b"exit 127\n")
            return
        for fd in fds:
            os.close(fd)
        fds = []
        while child.poll() is None:
            ready, _, _ = select.select([conn], [], [], 0.1)
            if ready and not conn.recv(4096):  # the shim is gone: so is the command
                with contextlib.suppress(OSError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                return
        code = child.returncode
        conn.sendall(f"exit {128 - code if code < 0 else code}\n".encode())
    except OSError:
        pass
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        conn.close()


def main():
    header = json.loads(sys.stdin.readline())
    name = header["socket"]
    with contextlib.suppress(OSError):
        os.unlink(name)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name)
    os.chmod(name, 0o666)  # the verifier uid connects
    server.listen(64)
    sys.stdout.write(header["nonce"] + " {\"ready\": true}\n")
    sys.stdout.flush()
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


main()
