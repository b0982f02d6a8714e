"""The trusted shim on a `script` verification's PATH: it runs the solution's programs as the
attempt's uid, through the launcher in the attempt's sandbox (launcher.py).

Installed (by kinds.py) as `.rsi-verifier/bin/python3`, `python` and `rsi-solution`, readable only
by the verifier uid, with `#!<the sandbox's python> -I` on top. The test script runs as the
verifier uid; what it starts through these names does not:

* `rsi-solution CMD ARGS...` always runs CMD as the attempt's uid;
* `python3 ARGS...` / `python ARGS...` runs as the attempt's uid, unless the program it runs is a
  file under the task's tests/ (a trusted checker: `python3 tests/check.py out.txt`), which runs
  here, as the verifier uid, with the real interpreter. `-c`, `-m`, stdin and every file outside
  tests/ (`python3 solution.py`, `python3 -c 'from solution import f ...'`) are the solution's.

The command gets the shim's stdin, stdout and stderr (passed as descriptors), its working
directory, and its environment minus rsi's own `RSI_*` variables; its exit status is the shim's.
Anything else the script runs (`./a.out`, `bash run.sh`, `/usr/bin/python3 ...` by full path) runs
as the verifier uid: scripts start submission code through these names (docs/sandbox.md).
Environment (set by boot.py): RSI_VERIFIER_TOP (the working directory), RSI_SOLUTION_SOCKET (the
launcher's socket name in it). Standard library only.
"""

import array
import json
import os
import socket
import sys

TAKES_ARGUMENT = "WX"  # python options whose value is the next argument when not attached


def python_program(args):
    """The program file a python command line runs, or None for -c, -m, stdin or none at all."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return args[index + 1] if index + 1 < len(args) else None
        if arg == "-" or not arg.startswith("-"):
            return None if arg == "-" else arg
        if arg.startswith("--"):
            index += 2 if arg == "--check-hash-based-pycs" else 1
            continue
        cluster = arg[1:]
        for position, letter in enumerate(cluster):
            if letter in "cm":
                return None
            if letter in TAKES_ARGUMENT:
                index += 1 if position + 1 < len(cluster) else 2
                break
        else:
            index += 1
    return None


def trusted(program, top):
    tests = os.path.realpath(os.path.join(top, "tests"))
    return os.path.realpath(program).startswith(tests + os.sep)


def exec_real(name, args):
    here = os.path.realpath(os.path.dirname(os.path.abspath(sys.argv[0])))
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.realpath(folder or ".") != here and os.access(candidate, os.X_OK) and os.path.isfile(candidate):
            os.execv(candidate, [name, *args])
    sys.stderr.write(f"{name}: command not found\n")
    sys.exit(127)


def ensure_std_fds():
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.dup2(os.open(os.devnull, os.O_RDWR), fd)


def run_as_solution(argv, top, name):
    """Send argv to the launcher with our three descriptors; return its exit status."""
    request = {
        "argv": argv,
        "cwd": os.getcwd(),
        "env": {k: v for k, v in os.environ.items() if not k.startswith("RSI_")},
    }
    data = (json.dumps(request) + "\n").encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    cwd = os.getcwd()
    try:
        os.chdir(top)  # a relative name: socket paths are limited to 108 bytes
        conn.connect(name)
    except OSError as error:
        sys.stderr.write(f"rsi: the solution launcher cannot be reached ({error.strerror})\n")
        return 127
    finally:
        os.chdir(cwd)
    sent = conn.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
    conn.sendall(data[sent:])
    reply = b""
    while not reply.endswith(b"\n") and len(reply) < 64:
        chunk = conn.recv(64)  # plain recv: descriptors the other side might send are discarded
        if not chunk:
            break
        reply += chunk
    words = reply.decode("ascii", "replace").split()
    if len(words) == 2 and words[0] == "exit" and words[1].isdigit():
        return min(int(words[1]), 255)
    return 1


def main():
    ensure_std_fds()
    name = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    top = os.environ.get("RSI_VERIFIER_TOP", "")
    socket_name = os.environ.get("RSI_SOLUTION_SOCKET", "")
    if name == "rsi-solution":
        if not args:
            sys.stderr.write("usage: rsi-solution COMMAND [ARGS...]\n")
            sys.exit(2)
        argv = args
    else:
        program = python_program(args)
        if program is not None and top and trusted(program, top):
            exec_real(name, args)
        argv = [name, *args]
    if not top or not socket_name:
        sys.stderr.write("rsi: no solution launcher in this verification\n")
        sys.exit(127)
    sys.exit(run_as_solution(argv, top, socket_name))


if __name__ == "__main__":
    main()
