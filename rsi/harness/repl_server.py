"""The stateful Python REPL that runs INSIDE the sandbox for a whole attempt (stdlib only).

This file is executed as a script by whatever Python the sandbox offers (possibly /usr/bin/python3
as user `nobody`), so it must never import `rsi` and must stay compatible with plain CPython 3.8+.
The harness passes its source with `python -c SOURCE CONFIG_JSON`; nothing is written into the
agent's working directory.

Wire protocol (why it cannot be corrupted by the agent's own printing):

- Requests arrive as one JSON line each on the ORIGINAL stdin, which is duplicated to a private fd;
  fd 0 is then pointed at /dev/null so `input()` in agent code cannot eat requests.
- Responses leave on the ORIGINAL stdout, duplicated to a private fd, framed as
  `\\n<TOKEN> <NBYTES>\\n<json>\\n` with a per-session random token given by the harness; the
  harness ignores anything that is not such a frame.
- fds 1 and 2 (so `print`, `sys.stderr`, `os.write(1, ...)` and child processes alike) are pointed
  at an unlinked temporary file; after each cell the server reads what was written (head and tail
  only, so a runaway print cannot exhaust memory) and truncates it.

Each cell runs in one persistent namespace, like a notebook: if the last statement is an
expression its repr is printed. A per-step timer (SIGALRM) interrupts runaway cells with
`StepTimeout`, a BaseException so that `except Exception` in agent code cannot swallow it; the
harness also keeps its own hard deadline and kills the process if the timer is defeated.
"""

import ast
import contextlib
import io
import json
import linecache
import os
import signal
import sys
import tempfile
import time
import traceback

HEAD_BYTES = 32768
TAIL_BYTES = 32768


class StepTimeout(BaseException):
    """Raised inside agent code when one cell exceeds its time budget."""


class _Session:
    def __init__(self, config):
        self.token = config["token"]
        self.step_s = float(config.get("step_s", 20.0))
        self.tools = list(config.get("tools", []))
        self.end_call = config.get("end_call") or ""
        self.submitted = False
        self.saved = []
        self.cell_no = 0
        self.current_cell = ""
        self.namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        self._install_tools()

    # -- tools offered to the agent ---------------------------------------------------------------
    def _install_tools(self):
        session = self

        def submit(*_args, **_kwargs):
            """End the attempt: the working directory is then checked by the hidden verifier."""
            session.submitted = True
            print("submitted.")

        def save_tool(name, function=None):
            """Keep a helper function with this attempt, so it may be promoted into the tool library."""
            if function is None and callable(name):
                function, name = name, getattr(name, "__name__", "")
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError("save_tool(name, function): name must be a Python identifier")
            if not callable(function):
                raise TypeError("save_tool(name, function): function must be callable")
            try:
                import inspect

                source = inspect.getsource(function)
            except (OSError, TypeError):
                source = ""
            session.saved.append(
                {
                    "name": name,
                    "function": getattr(function, "__name__", name),
                    "source": source,
                    "cell": session.current_cell,
                }
            )
            print(f"saved tool {name}.")

        if "submit" in self.tools:
            self.namespace["submit"] = submit
        if "save_tool" in self.tools:
            self.namespace["save_tool"] = save_tool
        # A custom end marker written as a call (e.g. "done()") behaves exactly like submit().
        if self.end_call and self.end_call.isidentifier():
            self.namespace[self.end_call] = submit

    # -- executing one cell -----------------------------------------------------------------------
    def run_cell(self, code):
        self.cell_no += 1
        self.current_cell = code
        filename = f"<cell-{self.cell_no}>"
        # Registering the source lets tracebacks and inspect.getsource see cell code.
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        error = None
        timed_out = False
        started = time.monotonic()
        try:
            tree = ast.parse(code, filename=filename, mode="exec")
        except SyntaxError:
            error = "".join(traceback.format_exception_only(*sys.exc_info()[:2]))
            return {"error": error, "timed_out": False, "wall_s": 0.0}
        last_expr = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last_expr = ast.Expression(tree.body.pop().value)
        # Re-armed every cell: an earlier cell may have replaced the handler.
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, self.step_s)
        try:
            exec(compile(tree, filename, "exec"), self.namespace)
            if last_expr is not None:
                value = eval(compile(last_expr, filename, "eval"), self.namespace)
                if value is not None:
                    print(repr(value))
        except StepTimeout:
            timed_out = True
            error = f"StepTimeout: this cell ran longer than {self.step_s:g}s and was interrupted\n"
        except SystemExit as stop:
            error = f"SystemExit: {stop.code} (the session keeps running)\n"
        except BaseException:
            kind, value, tb = sys.exc_info()
            # Drop the server's own frame so the agent sees only its cell.
            error = "".join(traceback.format_exception(kind, value, tb.tb_next if tb else None))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        return {"error": error, "timed_out": timed_out, "wall_s": round(time.monotonic() - started, 4)}


def _on_alarm(_signum, _frame):
    raise StepTimeout()


def _read_capture(capture_fd):
    """Head and tail of everything written to fds 1 and 2 since the last call; then empty it."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    size = os.lseek(capture_fd, 0, os.SEEK_END)
    head = os.pread(capture_fd, min(size, HEAD_BYTES), 0)
    tail = b""
    if size > HEAD_BYTES:
        start = max(HEAD_BYTES, size - TAIL_BYTES)
        tail = os.pread(capture_fd, size - start, start)
    os.ftruncate(capture_fd, 0)
    os.lseek(capture_fd, 0, os.SEEK_SET)
    return head.decode("utf-8", "replace"), tail.decode("utf-8", "replace"), size


def _open_capture():
    """An unlinked file for fds 1 and 2: in the temp dir, else in the working directory.

    The working directory is opened by the relative path ".": inside a sandbox its absolute path may
    run through folders this user cannot traverse.
    """
    try:
        return tempfile.TemporaryFile()
    except OSError:
        pass
    if hasattr(os, "O_TMPFILE"):
        try:
            return os.fdopen(os.open(".", os.O_TMPFILE | os.O_RDWR, 0o600), "w+b")
        except OSError:
            pass
    name = ".rsi-capture-" + os.urandom(8).hex()
    handle = open(name, "w+b")  # noqa: SIM115 - lives as long as the session
    os.unlink(name)
    return handle


def main():
    config = json.loads(sys.argv[1])
    token = config["token"]
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_fd, 0)
    capture = _open_capture()
    os.dup2(capture.fileno(), 1)
    os.dup2(capture.fileno(), 2)
    sys.stdin = io.TextIOWrapper(os.fdopen(0, "rb", closefd=False))
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8", errors="replace")
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8", errors="replace")
    signal.signal(signal.SIGALRM, _on_alarm)
    sys.path.insert(0, os.getcwd())
    session = _Session(config)

    def reply(payload):
        data = json.dumps(payload).encode("utf-8")
        replies.write(b"\n" + f"{token} {len(data)}\n".encode("ascii") + data + b"\n")
        replies.flush()

    reply({"op": "ready", "pid": os.getpid(), "python": sys.version.split()[0]})
    while True:
        line = requests.readline()
        if not line:
            return
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if request.get("op") == "exec":
            saved_before = len(session.saved)
            session.submitted = False  # per cell: a submit() answered with a failing public check is not final
            try:
                result = session.run_cell(request.get("code", ""))
            except StepTimeout:  # the timer fired in the instant between the cell's end and its reset
                result = {"error": None, "timed_out": False, "wall_s": session.step_s}
            head, tail, size = _read_capture(capture.fileno())
            result.update(
                {
                    "op": "result",
                    "id": request.get("id"),
                    "output_head": head,
                    "output_tail": tail,
                    "output_bytes": size,
                    "submitted": session.submitted,
                    "saved_tools": session.saved[saved_before:],
                }
            )
            reply(result)
        elif request.get("op") == "close":
            reply({"op": "closed"})
            return


if __name__ == "__main__":
    main()
