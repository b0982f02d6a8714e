"""The sandboxed half of the `cases` verifier: import the solution, call it on inputs, report values.

Runs as `python3 -I -c <this source>` inside a sandbox, with the standard library only. It is
UNTRUSTED by design: it shares a process with the agent's code, so it never sees an expected value
and decides nothing. It only answers "what did the function return for these inputs".

Protocol (one JSON object per line):
  host -> child (stdin):  {"nonce": N, "module": "solution", "function": "f"}   then, one at a time,
                          {"i": 3, "args": [...], "kwargs": {...}}
  child -> host (stdout): "<N> " + {"ready": true} | {"ready": false, "error": "..."}
                          "<N> " + {"i": 3, "ok": true, "value": ...} | {"i": 3, "ok": false, "error": "..."}
The real stdout/stdin are moved to private descriptors before the solution is imported, and fd 1
is pointed at stderr, so whatever the solution prints lands on stderr and can never be read as an
answer; the host also ignores every line that does not start with the nonce.
"""

import json
import os
import sys


def _main() -> None:
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    questions = os.fdopen(os.dup(0), "r", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    header = json.loads(questions.readline())
    nonce = header["nonce"]

    def send(message):
        answers.write(nonce + " " + json.dumps(message) + "\n")
        answers.flush()

    # Appended, not prepended: an agent's json.py or os.py must not replace the standard library.
    sys.path.append(os.getcwd())
    try:
        import importlib

        module = importlib.import_module(header["module"])
        function = getattr(module, header["function"])
        if not callable(function):
            raise TypeError(header["function"] + " is not callable")
    except BaseException as error:  # SystemExit and KeyboardInterrupt from the solution, too
        send({"ready": False, "error": type(error).__name__ + ": " + str(error)[:500]})
        return
    send({"ready": True})
    for line in questions:
        case = json.loads(line)
        try:
            value = function(*case.get("args", []), **case.get("kwargs", {}))
            encoded = json.dumps({"i": case["i"], "ok": True, "value": value})
        except BaseException as error:
            encoded = json.dumps({"i": case["i"], "ok": False, "error": type(error).__name__ + ": " + str(error)[:500]})
        answers.write(nonce + " " + encoded + "\n")
        answers.flush()


if __name__ == "__main__":
    _main()
