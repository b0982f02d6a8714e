"""The sandboxed half of the public checks: import a candidate solution, evaluate each public example.

Runs as `python3 -I -c <this source>` inside the attempt's sandbox, standard library only, in a scratch
copy of the working directory holding the candidate. It shares a process with the candidate's code, so
what it reports is only as honest as that code: it decides which candidate is submitted, never the
verdict (the hidden verifier judges the submitted file on its own).

Protocol: stdin holds one JSON object {"nonce", "module", "examples": [{"call", "expected"}], "timeout_s",
"unordered"} ("unordered": a returned list matches `expected` in any order).
stdout carries "<nonce> " + {"i": 0, "passed": bool, "got": "...", "error": "..."} per example, then
"<nonce> " + {"done": true}. The real stdout is moved to a private descriptor before the candidate is
imported and fd 1 points at stderr, so what the candidate prints is never read as a result.
"""

import json
import math
import os
import signal
import sys


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow()


def _same(got, want):
    if isinstance(got, bool) or isinstance(want, bool):
        return type(got) is type(want) and got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return got == want or math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want, strict=True))  # tuples are lists, as in `cases`
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(_same(got[k], want[k]) for k in got)
    return got == want


def _main():
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    header = json.loads(sys.stdin.read())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    nonce = header["nonce"]

    def send(message):
        answers.write(nonce + " " + json.dumps(message) + "\n")
        answers.flush()

    signal.signal(signal.SIGALRM, _alarm)
    sys.path.append(os.getcwd())  # appended: the candidate's json.py must not replace the standard library
    namespace = None
    load_error = ""
    try:
        signal.setitimer(signal.ITIMER_REAL, header["timeout_s"])
        import importlib

        namespace = vars(importlib.import_module(header["module"]))
    except BaseException as error:  # SystemExit and KeyboardInterrupt from the candidate, too
        load_error = "cannot import the solution: " + type(error).__name__ + ": " + str(error)[:300]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    for index, example in enumerate(header["examples"]):
        if namespace is None:
            send({"i": index, "passed": False, "got": "", "error": load_error})
            continue
        try:
            want = eval(example["expected"], {})
            signal.setitimer(signal.ITIMER_REAL, header["timeout_s"])
            got = eval(example["call"], dict(namespace))
            signal.setitimer(signal.ITIMER_REAL, 0)
            text = repr(got)
            if header.get("unordered") and isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)):
                passed = len(got) == len(want) and all(any(_same(g, w) for w in want) for g in got) \
                    and all(any(_same(g, w) for g in got) for w in want)
            else:
                passed = _same(got, want)
            send({"i": index, "passed": bool(passed), "got": text[:300] + ("..." if len(text) > 300 else "")})
        except _Slow:
            send({"i": index, "passed": False, "got": "", "error": "TimeoutError: no answer within {:g}s".format(header["timeout_s"])})
        except BaseException as error:
            signal.setitimer(signal.ITIMER_REAL, 0)
            send({"i": index, "passed": False, "got": "", "error": type(error).__name__ + ": " + str(error)[:300]})
    send({"done": True})


if __name__ == "__main__":
    _main()
