"""The test process of a `pytest` verification: it runs INSIDE the sandbox, as the solution's uid.

Installed read-only (owned by another uid when rsi runs as root) as `.rsi-verifier/pytest_child.py`
next to the staged solution, and started by `boot.py` twice, with the standard library and pytest only:

* `collect` — pytest's collection with the solution module replaced by an inert stand-in, so no
  agent code runs: the trusted list of tests (node id, file, function name, line). Printed on stdout.
* `run` — the real run. Before the solution is imported this process makes itself non-dumpable
  (no same-uid process can ptrace it or read its memory), installs an audit hook that refuses the
  introspection an agent would need to forge or to read expected values (frames, code objects,
  gc, ctypes, compile/exec, trace hooks, new programs, opening the tests or /proc) whenever agent
  code is on the stack, and imports the solution itself. Each test function is called by THIS
  plugin (its own `pytest_pyfunc_call`); an outcome is recorded only from there, only for a
  function compiled from the trusted test file, and only with no agent frame on the stack, through
  a recorder whose nonce lives in a suspended generator (reachable only through frames or gc, both
  refused to agent code). Records go to a pipe that `boot.py` reads; boot compares them with the
  collected list. Values returned by the solution are checked as they come back: built-in value
  types only, or objects that do not claim equality with two different values; the state that
  tests rely on (builtins, operator, sys hooks, signal handlers, threads) must be as it was.

Written against an agent that has read this file: its globals and classes are reachable (through
pytest's plugin list), so the audit hook is a closure with every reference bound before the import
(class attributes can be reassigned unaudited), the recorder binds its writer and checks that the
records descriptor still names its pipe before each write (no dup2 interception of the nonce), and
a `passed` is written as `failed` once this module's globals, classes or the plugin's closure cells
differ from their state before the import.

What this does NOT stop (see docs/sandbox.md): agent code runs in this interpreter, so an attack
written against this file can still succeed: rebinding the wrapper's closure cells while the
solution runs and putting them back before the recorder looks, trusted code invoked through C-level
callables (a finalizer running a functools.partial) with no agent frame on the stack, or patching
a module the tests use. It is a strong obstacle, not a wall: tasks that must resist such attacks
use `cases`.
"""

import contextlib
import json
import os
import sys

PLAIN_TYPES = (int, float, complex, str, bytes, bool, type(None), list, tuple, dict, set, frozenset, range)

WATCHED_MODULES = ("builtins", "operator", "pytest")
MAX_VALUES_CHECKED = 10_000


def _undumpable() -> bool:
    """PR_SET_DUMPABLE=0: same-uid processes can no longer ptrace us or open /proc/<us>/mem or fd/."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0
    except Exception:  # noqa: BLE001 - reported by the caller as a weaker run
        return False


def _stub_module(name):
    """A module whose every attribute is an inert callable: collection imports it instead of the solution."""
    import types

    class Inert:
        def __call__(self, *args, **kwargs):
            return Inert()

        def __getattr__(self, name):
            return Inert()

        def __iter__(self):
            return iter(())

    module = types.ModuleType(name)
    vars(module)["__getattr__"] = lambda attr: Inert()  # PEP 562
    return module


def _collect(module_name, pytest_args):
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.modules[module_name] = _stub_module(module_name)
    import pytest

    found = []

    class Collector:
        def pytest_collection_finish(self, session):
            for item in session.items:
                function = getattr(item, "function", None)
                code = getattr(function, "__code__", None)
                found.append(
                    {
                        "id": item.nodeid,
                        "file": code.co_filename if code else "",
                        "name": code.co_name if code else "",
                        "line": code.co_firstlineno if code else 0,
                    }
                )

    code = pytest.main([*pytest_args, "--collect-only", "-q"], plugins=[Collector()])
    out.write(json.dumps({"exit": int(code), "tests": found}) + "\n")
    out.flush()
    return 0


def make_guard(trusted_roots, protected_roots):
    """The audit hook: refuses sensitive events while agent code is on the stack.

    Returns (hook, agent_on_stack). A closure, not a class: CPython audits no assignment to a class
    attribute, so a class's methods could be swapped by agent code that reaches the class (through
    pytest's plugin list: a plugin function's __globals__). Everything the hook uses is bound here,
    before the solution is imported; the two functions are referenced only by the interpreter's hook
    list and by the recorder's frame, neither of which agent code can reach.
    """
    import collections
    import dataclasses
    import enum
    import inspect
    import logging
    import threading
    import typing

    trusted, protected = tuple(trusted_roots), tuple(protected_roots)
    local, main_thread, ident = threading.local(), threading.get_ident(), threading.get_ident
    getframe, realpath, abspath, isabs, isdir, fsdecode = (
        sys._getframe, os.path.realpath, os.path.abspath, os.path.isabs, os.path.isdir, os.fsdecode
    )
    is_instance, as_str, str_or_bytes, type_type, refuse = isinstance, str, (str, bytes), type, PermissionError
    get_attr, length, any_of = getattr, len, any
    sensitive_events, sensitive_prefixes, frame_attributes = SENSITIVE_EVENTS, SENSITIVE_PREFIXES, FRAME_AND_CODE_ATTRIBUTES
    protected_modules, own_module = PROTECTED_MODULE_PREFIXES, __name__
    known: dict[str, bool] = {}
    # Standard-library callers that read a frame only for a module name or a log record's file and
    # line (namedtuple, Enum, NamedTuple, make_dataclass; logging's findCaller).
    frame_readers = frozenset(realpath(as_str(m.__file__)) for m in (collections, dataclasses, enum, typing))
    logging_file = realpath(as_str(logging.__file__))
    # inspect.signature (dataclasses call it for a docstring) reads a function's __code__ for its
    # parameters; a frame or a test function's code object it cannot reach.
    code_readers = frozenset(realpath(as_str(m.__file__)) for m in (inspect, dataclasses))

    def trusted_file(filename):
        found = known.get(filename)
        if found is None:
            if filename.startswith("<frozen "):
                found = True
            elif filename.startswith("<") or not isabs(filename):
                found = False
            else:
                found = realpath(filename).startswith(trusted)
            known[filename] = found
        return found

    def agent_on_stack(frame):
        while frame is not None:
            if not trusted_file(frame.f_code.co_filename):
                return True
            frame = frame.f_back
        return False

    def protected_path(path):
        """The test modules (a test may hand its data files to the solution), the verifier's own
        folder, and other processes' (or our own) descriptors and memory."""
        if is_instance(path, int):
            return False
        if is_instance(path, bytes):
            path = fsdecode(path)
        real = realpath(abspath(as_str(path)))
        if real.startswith(protected[0]) and (real.endswith((".py", ".pyc")) or isdir(real)):
            return True
        return real.startswith(protected[1:]) or real.startswith(("/proc/", "/dev/fd/")) or real == "/proc"

    def reads_frames_harmlessly(event, args, caller):
        if caller is None or event not in ("sys._getframe", "object.__getattr__"):
            return False
        filename = realpath(caller.f_code.co_filename)
        if event == "sys._getframe" and filename in frame_readers:
            return True
        if event == "object.__getattr__" and args[1:2] == ("__code__",) and filename in code_readers:
            return True
        if filename != logging_file:
            return False
        outer = caller if caller.f_code.co_name == "findCaller" else caller.f_back
        return outer is not None and outer.f_code.co_name == "findCaller" and outer.f_code.co_filename == caller.f_code.co_filename

    def verifier_class(cls):
        module = cls.__dict__.get("__module__")
        module = module if is_instance(module, as_str) else ""
        return module == own_module or module.startswith(protected_modules)

    def sensitive(event, args, caller):
        if reads_frames_harmlessly(event, args, caller):
            return False
        if event == "object.__getattr__":
            return args[1:2] and args[1] in frame_attributes
        if event in ("object.__setattr__", "object.__delattr__"):
            # Renaming a class is common (namedtuple sets __module__); swapping code or classes is
            # not, nor (where it is audited: type.__setattr__ called by name) patching a class of
            # this verifier, pytest or pluggy.
            if args[1:2] in (("__code__",), ("__class__",), ("__bases__",)):
                return True
            return is_instance(args[0], type_type) and verifier_class(args[0])
        if event in sensitive_events or event.startswith(sensitive_prefixes):
            return True
        if event in ("compile", "exec", "code.__new__", "function.__new__", "marshal.loads"):
            # The standard library (dataclasses, namedtuple, importing a module from its .pyc)
            # compiles for itself; agent code that compiles, unmarshals or executes directly is refused.
            return caller is not None and not trusted_file(caller.f_code.co_filename)
        if event == "open":
            return protected_path(args[0])
        if event in ("os.link", "os.symlink", "os.rename", "os.chmod", "os.chown", "os.listxattr"):
            return any_of(protected_path(arg) for arg in args[:2] if is_instance(arg, str_or_bytes))
        return False

    def hook(event, args):
        if get_attr(local, "busy", False):
            return
        local.busy = True
        try:
            frame = getframe(1)
            # Outside the main thread (pytest never makes threads) nothing sensitive is allowed:
            # a worker thread would otherwise run a sensitive call for agent code with a clean stack.
            if sensitive(event, args, frame) and (ident() != main_thread or agent_on_stack(frame)):
                what = f"{event} {args[1]!r}" if event.startswith("object.") and length(args) > 1 else event
                where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?"
                raise refuse(f"refused in a verification: {what} (from {where})")
        finally:
            local.busy = False

    return hook, agent_on_stack


SENSITIVE_EVENTS = frozenset(
    {
        "sys._getframe",
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.settrace",
        "sys.setprofile",
        "sys.addaudithook",
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
        "cpython.run_interactivehook",
        "_thread.start_new_thread",
    }
)
FRAME_AND_CODE_ATTRIBUTES = frozenset(
    {"__code__", "tb_frame", "f_code", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code"}
)
PROTECTED_MODULE_PREFIXES = ("_pytest", "pytest", "pluggy")
SENSITIVE_PREFIXES = ("ctypes.", "gc.get_", "cpython.PyInterpreterState", "sys.set_asyncgen_hooks", "mmap.")


def _recorder(nonce_fd, out_fd, on_stack, allowed_code, pristine):
    """A generator holding the nonce in its suspended frame; `send((node_id, outcome, where))` records.

    A record is written only when the caller is the plugin's own call site and no agent code is on
    the stack (agent code can reach this generator, but cannot make it write in its name). Everything
    it uses is bound here, before the solution is imported (agent code may later patch json, os, sys
    or this module's globals: this frame is out of its reach). It writes only to the descriptor it
    was given: if that number now names another file (an agent's dup2 to read the nonce), it writes
    nothing more (boot then misses records: failed). A `passed` is written as `failed` once
    `pristine` (this verifier's namespace and classes, as they were before the import) has changed.
    """
    read, write, close, fstat, dumps, getframe = os.read, os.write, os.close, os.fstat, json.dumps, sys._getframe
    as_list, is_tuple, tuple_type = list, isinstance, tuple
    nonce = read(nonce_fd, 128).decode().strip()
    close(nonce_fd)
    first = fstat(out_fd)
    channel = (first.st_dev, first.st_ino)
    intact = _integrity(pristine)
    broken = False
    message = yield
    while True:
        caller = getframe(1)
        ok = caller.f_code is allowed_code[0] and not on_stack(caller)
        if ok and is_tuple(message, tuple_type) and not broken:
            try:
                now = fstat(out_fd)
                broken = (now.st_dev, now.st_ino) != channel
            except OSError:
                broken = True
            if not broken:
                if message[1] == "passed" and not intact():
                    message = (message[0], "failed", *message[2:])
                write(out_fd, (nonce + " " + dumps(as_list(message)) + "\n").encode())
        message = yield ok


def _integrity(pristine):
    """A check that every mapping and cell of `pristine` still holds the same objects."""
    missing = object()
    mappings, cells = pristine

    def intact():
        for mapping, values in mappings:
            for name, value in values.items():
                if mapping.get(name, missing) is not value:
                    return False
        for cell, value in cells:  # noqa: SIM110 - no builtin (all) that agent code could have patched
            if cell.cell_contents is not value:
                return False
        return True

    return intact


def _pristine(cells):
    """This verifier's namespace, its classes, `random` (the value checks use it) and the plugin's
    closure cells, as they are now (before the solution is imported)."""
    import random

    namespace = globals()
    own = [value for value in namespace.values() if isinstance(value, type) and value.__module__ == __name__]
    mappings = [namespace, vars(random), *(cls.__dict__ for cls in own)]
    return [(mapping, dict(mapping)) for mapping in mappings], [(cell, cell.cell_contents) for cell in cells]


def _snapshot():
    """Identities of what the tests' results may depend on (compared after every solution call)."""
    import signal
    import threading

    state: dict = {}
    for name in WATCHED_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            state["module:" + name] = (id(module), [id(v) for v in vars(module).values()])
    state["hooks"] = tuple(id(x) for x in (sys.excepthook, sys.displayhook, sys.unraisablehook, sys.breakpointhook))
    state["meta_path"] = tuple(id(x) for x in sys.meta_path)
    state["path_hooks"] = tuple(id(x) for x in sys.path_hooks)
    state["signals"] = tuple(
        id(signal.getsignal(s)) for s in range(1, signal.NSIG) if s not in (signal.SIGKILL, signal.SIGSTOP)
    )
    state["timer"] = signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0)
    state["threads"] = threading.active_count()
    import gc

    state["gc_callbacks"] = tuple(id(x) for x in gc.callbacks)
    return state


def _changed(before, after):
    """Keys whose state differs; a module may gain attributes (a lazy import), never change one."""
    changed = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if key.startswith("module:") and old is not None and new is not None:
            if old[0] != new[0] or new[1][: len(old[1])] != old[1]:
                changed.append(key)
        elif old != new:
            changed.append(key)
    return changed


class Untrusted(AssertionError):
    """A solution value or action that a test must not rely on (the test fails)."""


def _check_value(value):
    """Refuse returned values that could lie to a test's assert: see `_lies`."""
    stack, seen = [value], 0
    while stack and seen < MAX_VALUES_CHECKED:
        item = stack.pop()
        seen += 1
        kind = type(item)
        if kind in PLAIN_TYPES:
            if kind in (list, tuple, set, frozenset):
                stack.extend(item)
            elif kind is dict:
                stack.extend(item.keys())
                stack.extend(item.values())
            continue
        lie = _lies(item)
        if lie:
            raise Untrusted(f"the solution returned a {kind.__name__} that {lie}")


def _lies(item):
    """What a non-built-in value claims that no honest value does: equality with two different
    values of one kind, comparing both below and not below a value, or containing two random
    values. An object that lies only about the expected value must know it (which the guard hides)."""
    import random

    a, b = random.getrandbits(62), random.getrandbits(62) | (1 << 62)
    pairs = [(a, b), (str(a), str(b)), (a + 0.5, b + 0.5), ([a], [b]), ((a,), (b,)), ({a: a}, {b: b}), (None, ())]
    for left, right in pairs:
        if _holds(lambda x=left: item == x) and _holds(lambda x=right: item == x):
            return "claims to equal different values"
    if _holds(lambda: item < a) and _holds(lambda: item >= a):
        return "claims to be both below and not below a value"
    if _holds(lambda: a in item) and _holds(lambda: b in item):
        return "claims to contain random values"
    return ""


def _holds(check):
    try:
        return bool(check())
    except Exception:  # noqa: BLE001 - a comparison that raises claims nothing
        return False


def _run(module_name, pytest_args, nonce_fd, records_fd, tests_dir, verifier_dir):
    import sysconfig

    dumpable_off = _undumpable()
    trusted = {os.path.realpath(p) + os.sep for key, p in sysconfig.get_paths().items() if key in ("stdlib", "platstdlib", "purelib", "platlib")}
    import pytest

    trusted.add(os.path.realpath(os.path.dirname(os.path.dirname(pytest.__file__))) + os.sep)
    protected = (os.path.realpath(tests_dir) + os.sep, os.path.realpath(verifier_dir) + os.sep)
    trusted.update(protected)
    hook, on_stack = make_guard(sorted(trusted), protected)
    allowed, box = [None], [None]
    plugin, cells = _make_plugin(module_name, box, allowed, tests_dir)
    plugin_recorder = _recorder(nonce_fd, records_fd, on_stack, allowed, _pristine(cells))
    next(plugin_recorder)
    box[0] = plugin_recorder
    import types

    # Not reachable by name any more (its functions still are, through pytest's plugin list: the
    # recorder checks that nothing of this module changed before it writes a pass).
    sys.modules["__main__"] = types.ModuleType("__main__")
    os.dup2(2, 1)
    sys.addaudithook(hook)
    code = pytest.main(pytest_args, plugins=[plugin])
    plugin.finish(int(code), dumpable_off)
    for stream in (sys.stdout, sys.stderr):  # os._exit skips the flush: pytest's report would be lost
        with contextlib.suppress(Exception):  # a stream agent code broke changes nothing recorded
            stream.flush()
    os._exit(0)


def _make_plugin(module_name, box, allowed, tests_dir):
    """The pytest plugin of the `run` mode (a closure: nothing global for agent code to patch)."""
    import importlib
    import inspect
    import linecache

    import pytest

    state = {"baseline": None, "problem": ""}
    # Bound now, before the solution is imported: patching this module's globals later changes
    # nothing here (and the recorder notices it: _pristine).
    snapshot, changed_since, check_value, untrusted, clear_lines = _snapshot, _changed, _check_value, Untrusted, linecache.clearcache

    def wrap(function):
        def called(*args, **kwargs):
            clear_lines()
            # Compared with the state right before the call, not the collection baseline: pytest itself
            # swaps hooks per test phase (7.x installs its own sys.unraisablehook around each call), and
            # what matters is what the solution's code changed while it ran.
            before = snapshot()
            result = function(*args, **kwargs)
            check_value(result)  # may run agent code (__eq__): before the state check
            changed = changed_since(before, snapshot())
            if changed:
                state["problem"] = "the solution changed " + ", ".join(changed[:5])
                raise untrusted(state["problem"])
            return result

        called.__name__ = getattr(function, "__name__", "called")
        called.__doc__ = getattr(function, "__doc__", None)
        return called

    def emit(message):
        return box[0].send(message)

    def record(item, outcome):
        code = getattr(getattr(item, "function", None), "__code__", None)
        where = [code.co_filename, code.co_name, code.co_firstlineno] if code is not None else ["", "", 0]
        return emit((item.nodeid, outcome, *where))

    class Plugin:
        def pytest_collection(self, session):
            state["baseline"] = _snapshot()
            try:
                module = importlib.import_module(module_name)
            except BaseException as error:  # noqa: BLE001 - SystemExit at import too: a failed solution
                state["problem"] = f"importing the solution raised {type(error).__name__}"
                return None
            changed = _changed(state["baseline"], _snapshot())
            if changed:
                state["problem"] = "importing the solution changed " + ", ".join(changed[:5])
            _wrap_module(module, module_name, wrap)
            return None

        def pytest_collection_finish(self, session):
            root = os.path.realpath(tests_dir) + os.sep
            for name, module in list(sys.modules.items()):
                if os.path.realpath(getattr(module, "__file__", None) or "/").startswith(root):
                    del sys.modules[name]

        @pytest.hookimpl(tryfirst=True)
        def pytest_pyfunc_call(self, pyfuncitem):
            function = pyfuncitem.obj
            code = getattr(function, "__code__", None)
            kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
            try:
                if state["problem"]:
                    raise Untrusted(state["problem"])
                if code is None or code is not getattr(pyfuncitem.function, "__code__", None):
                    raise Untrusted("the test function was replaced")
                returned = function(**kwargs)
                if inspect.isawaitable(returned) or inspect.isgenerator(returned):
                    close = getattr(returned, "close", None)
                    if close is not None:
                        close()
                    raise Untrusted("async and generator tests are not run by this verifier (a pass would be unchecked)")
            except BaseException:
                record(pyfuncitem, "failed")
                raise
            record(pyfuncitem, "passed")
            return True

        def finish(self, exit_code, dumpable_off):
            emit(("<session>", "finished", str(exit_code), "undumpable" if dumpable_off else "dumpable", 0))

    allowed[0] = emit.__code__
    plugin = Plugin()
    # Every closure cell of the plugin (its checks, its recorder's box): agent code can reach them
    # through pytest's plugin list; the recorder checks they still hold what they hold now.
    cells: list = []
    todo = [*vars(Plugin).values(), wrap, record, emit]
    while todo:
        function = todo.pop()
        for cell in getattr(function, "__closure__", None) or ():
            if all(cell is not seen for seen in cells):
                cells.append(cell)
                todo.append(cell.cell_contents)
    return plugin, cells


def _wrap_module(module, module_name, wrap):
    """Route every function of the solution module (and methods of its classes) through `wrap`."""
    import types

    for name, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType) and not name.startswith("__"):
            setattr(module, name, wrap(value))
        elif isinstance(value, type) and value.__module__ == module_name:
            for attr, member in list(vars(value).items()):
                if isinstance(member, types.FunctionType) and attr not in ("__init__", "__new__", "__init_subclass__"):
                    setattr(value, attr, wrap(member))


def main():
    mode = sys.argv[1]
    module_name = os.environ["RSI_SOLUTION_MODULE"]
    pytest_args = json.loads(os.environ["RSI_PYTEST_ARGS"])
    sys.path.insert(0, os.getcwd())
    if mode == "collect":
        raise SystemExit(_collect(module_name, pytest_args))
    _run(
        module_name,
        pytest_args,
        int(os.environ["RSI_NONCE_FD"]),
        int(os.environ["RSI_RECORDS_FD"]),
        os.environ["RSI_TESTS_DIR"],
        os.path.dirname(os.path.abspath(__file__)),
    )


if __name__ == "__main__":
    main()
