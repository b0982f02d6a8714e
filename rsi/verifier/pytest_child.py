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
(class attributes can be reassigned unaudited); the recorder (a generator: its frame is out of
reach) holds the nonce, the checks and what they use, wraps every callable of the solution module
in a method object over a tuple and a generator of its own (nothing to rebind), checks that the
records descriptor still names its pipe before each write (no dup2 interception of the nonce), and
writes a `passed` as `failed` once this module's globals, classes or the plugin's closure cells
differ from their state before the import.

What this does NOT stop (see docs/sandbox.md): agent code runs in this interpreter, so an attack
written against this file can still succeed: swapping and restoring the closure cells of a class
method's wrapper while it runs, trusted code invoked through C-level callables (a finalizer
running a functools.partial) with no agent frame on the stack, or patching a module the tests
use. It is a strong obstacle, not a wall: tasks that must resist such attacks use `cases`.
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

    Returns (hook, agent_on_stack). Closures, not a class: CPython audits no assignment to a class
    attribute, so a class's methods could be swapped by agent code that reaches the class (through
    pytest's plugin list: a plugin function's __globals__). Everything they use is bound before the
    solution is imported; they are referenced only by the interpreter's hook list and by the
    recorder's frame, neither of which agent code can reach.
    """
    import threading

    trusted_file, agent_on_stack = _make_trust(tuple(trusted_roots))
    sensitive = _make_sensitive(trusted_file, _make_protected_path(tuple(protected_roots)))
    local, main_thread, ident, getframe = threading.local(), threading.get_ident(), threading.get_ident, sys._getframe
    get_attr, length, refuse = getattr, len, PermissionError

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


def _make_trust(trusted):
    """(trusted_file, agent_on_stack): a frame is the agent's unless its code comes from a file under
    `trusted` (the standard library, site-packages, pytest, the tests, this verifier) or is frozen."""
    realpath, isabs = os.path.realpath, os.path.isabs
    known: dict[str, bool] = {}

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

    return trusted_file, agent_on_stack


def _make_protected_path(protected):
    """Whether a path is the test modules (a test may hand its data files to the solution), the
    verifier's own folder, or other processes' (or our own) descriptors and memory."""
    realpath, abspath, isdir, fsdecode, is_instance, as_str = (
        os.path.realpath, os.path.abspath, os.path.isdir, os.fsdecode, isinstance, str
    )

    def protected_path(path):
        if is_instance(path, int):
            return False
        if is_instance(path, bytes):
            path = fsdecode(path)
        real = realpath(abspath(as_str(path)))
        if real.startswith(protected[0]) and (real.endswith((".py", ".pyc")) or isdir(real)):
            return True
        return real.startswith(protected[1:]) or real.startswith(("/proc/", "/dev/fd/")) or real == "/proc"

    return protected_path


def _trusted_origin(name, trusted_file):
    """[the real path of module `name`'s file] where it is found (not imported) under the trusted roots, else []."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    origin = spec.origin if spec is not None else None
    return [os.path.realpath(origin)] if origin and trusted_file(origin) else []


def _make_sensitive(trusted_file, protected_path):
    """sensitive(event, args, caller): whether an audit event is one agent code may not cause."""
    import collections
    import dataclasses
    import enum
    import inspect
    import logging
    import typing

    realpath, is_instance, as_str, str_or_bytes, type_type, any_of = os.path.realpath, isinstance, str, (str, bytes), type, any
    sensitive_events, sensitive_prefixes, frame_attributes = SENSITIVE_EVENTS, SENSITIVE_PREFIXES, FRAME_AND_CODE_ATTRIBUTES
    protected_modules, own_module = PROTECTED_MODULE_PREFIXES, __name__
    # Standard-library callers that read a frame only for a module name or a log record's file and
    # line (namedtuple, Enum, NamedTuple, make_dataclass; logging's findCaller). typing_extensions
    # (imported by pytest plugins such as anyio's, or by a task's tests) reads one for a module name
    # and, on Python < 3.13, in the `typing._check_generic` it installs, so that every `List[int]` of
    # an honest solution calls sys._getframe from it; it counts only where it is the trusted install
    # (a planted typing_extensions.py in the work folder is the agent's own code).
    frame_readers = frozenset(
        [realpath(as_str(m.__file__)) for m in (collections, dataclasses, enum, typing)] + _trusted_origin("typing_extensions", trusted_file)
    )
    logging_file = realpath(as_str(logging.__file__))
    # inspect.signature (dataclasses call it for a docstring) reads a function's __code__ for its
    # parameters; a frame or a test function's code object it cannot reach.
    code_readers = frozenset(realpath(as_str(m.__file__)) for m in (inspect, dataclasses))

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

    return sensitive


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


def _recorder(nonce_fd, out_fd, on_stack, allowed_code, pristine, checks):
    """The trusted core of the run: a generator whose suspended frame holds the nonce, the checks
    and everything they use, all bound before the solution is imported (agent code may later patch
    json, os, sys, builtins or this module's globals: this frame is out of its reach). The plugin
    talks to it through `emit` (`send(message)`); it acts only when the caller is `emit` and no
    agent code is on the stack (agent code can reach this generator, not make it act in its name):

    * ("<baseline>",) right before the solution is imported: the state it must not change;
    * ("<wrap>", module, name) right after: compares the state, then routes every callable of the
      solution module through a generator of its own (`_entry`), and the methods of its classes
      through closures (see docs/sandbox.md for what remains); answers the problem found, or "";
    * ("<problem>",): the first problem found so far, or "";
    * (node_id, outcome, file, name, line): one record, written tagged with the nonce.

    It writes only to the descriptor it was given: if that number now names another file (an
    agent's dup2 to read the nonce), it writes nothing more (boot then misses records: failed).
    A `passed` is written as `failed` when the solution module was never wrapped, once a problem
    was found (a solution call changed the state, a returned value lied), or once `pristine` (this
    module's namespace and classes, the plugin's closure cells, as before the import) has changed.
    """
    read, write, close, fstat, dumps, getframe = os.read, os.write, os.close, os.fstat, json.dumps, sys._getframe
    as_list, is_instance, tuple_type, length = list, isinstance, tuple, len
    snapshot, changed_since, _check_value = checks
    nonce = read(nonce_fd, 128).decode().strip()
    close(nonce_fd)
    first = fstat(out_fd)
    channel = (first.st_dev, first.st_ino)
    intact = _integrity(pristine)
    problems: list = []
    wrap_module = _make_wrapping(checks, problems)
    baseline, wrapped, broken = None, False, False

    message = yield
    while True:
        caller = getframe(1)
        ok = caller.f_code is allowed_code[0] and not on_stack(caller)
        reply: object = ok
        head = message[0] if ok and is_instance(message, tuple_type) and length(message) else None
        if head == "<baseline>":
            baseline = snapshot()
        elif head == "<wrap>":
            changed = changed_since(baseline, snapshot()) if baseline is not None else ["the state (no baseline)"]
            if changed:
                problems.append("importing the solution changed " + ", ".join(changed[:5]))
            trouble = wrap_module(message[1], message[2])
            if trouble:
                problems.append(trouble)
            wrapped = not trouble
            reply = problems[0] if problems else ""
        elif head == "<problem>":
            reply = problems[0] if problems else ""
        elif head is not None and not broken:
            try:
                now = fstat(out_fd)
                broken = (now.st_dev, now.st_ino) != channel
            except OSError:
                broken = True
            if not broken:
                if message[1] == "passed" and (problems or not wrapped or not intact()):
                    message = (message[0], "failed", *message[2:])
                write(out_fd, (nonce + " " + dumps(as_list(message)) + "\n").encode())
        message = yield reply


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


class Untrusted(AssertionError):
    """A solution value or action that a test must not rely on (the test fails)."""


def _make_checks():
    """(snapshot, changed_since, check_value): closures over references bound now, before the
    solution is imported. Patching this module, builtins, random, signal or threading later changes
    nothing in them, and agent code cannot reach them (only the recorder's frame holds them)."""
    import gc
    import signal
    import threading

    modules, ident, vars_of, sorted_of, as_tuple, length, range_of = sys.modules, id, vars, sorted, tuple, len, range
    getsignal, getitimer, itimer_real, nsig = signal.getsignal, signal.getitimer, signal.ITIMER_REAL, signal.NSIG
    unblockable, active_count, gc_callbacks = (signal.SIGKILL, signal.SIGSTOP), threading.active_count, gc.callbacks
    watched, sys_module = WATCHED_MODULES, sys

    def snapshot():
        """Identities of what the tests' results may depend on (compared around every solution call)."""
        state: dict = {}
        for name in watched:
            module = modules.get(name)
            if module is not None:
                state["module:" + name] = (ident(module), [ident(v) for v in vars_of(module).values()])
        hooks = (sys_module.excepthook, sys_module.displayhook, sys_module.unraisablehook, sys_module.breakpointhook)
        state["hooks"] = as_tuple(ident(x) for x in hooks)
        state["meta_path"] = as_tuple(ident(x) for x in sys_module.meta_path)
        state["path_hooks"] = as_tuple(ident(x) for x in sys_module.path_hooks)
        state["signals"] = as_tuple(ident(getsignal(s)) for s in range_of(1, nsig) if s not in unblockable)
        state["timer"] = getitimer(itimer_real) != (0.0, 0.0)
        state["threads"] = active_count()
        state["gc_callbacks"] = as_tuple(ident(x) for x in gc_callbacks)
        return state

    def changed_since(before, after):
        """Keys whose state differs; a module may gain attributes (a lazy import), never change one."""
        changed = []
        for key in sorted_of(before.keys() | after.keys()):
            old, new = before.get(key), after.get(key)
            if key.startswith("module:") and old is not None and new is not None:
                if old[0] != new[0] or new[1][: length(old[1])] != old[1]:
                    changed.append(key)
            elif old != new:
                changed.append(key)
        return changed

    return snapshot, changed_since, _make_value_check()


def _make_value_check():
    """check_value(value): refuse a returned value that could lie to a test's assert (see `lies`);
    every reference bound now, before the solution is imported."""
    import random

    type_of, as_bool, as_str, as_list, getrandbits = type, bool, str, list, random.getrandbits
    plain, containers, dict_type, limit, untrusted, exception = (
        PLAIN_TYPES, (list, tuple, set, frozenset), dict, MAX_VALUES_CHECKED, Untrusted, Exception
    )

    def holds(check):
        try:
            return as_bool(check())
        except exception:  # a comparison that raises claims nothing
            return False

    def lies(item):
        """What a non-built-in value claims that no honest value does: equality with two different
        values of one kind, comparing both below and not below a value, or containing two random
        values. An object that lies only about the expected value must know it (the guard hides it)."""
        a, b = getrandbits(62), getrandbits(62) | (1 << 62)
        pairs = [(a, b), (as_str(a), as_str(b)), (a + 0.5, b + 0.5), ([a], [b]), ((a,), (b,)), ({a: a}, {b: b}), (None, ())]
        for left, right in pairs:
            if holds(lambda x=left: item == x) and holds(lambda x=right: item == x):
                return "claims to equal different values"
        if holds(lambda: item < a) and holds(lambda: item >= a):
            return "claims to be both below and not below a value"
        if holds(lambda: a in item) and holds(lambda: b in item):
            return "claims to contain random values"
        return ""

    def check_value(value):
        """Refuse returned values that could lie to a test's assert: see `lies`."""
        stack, seen = [value], 0
        while stack and seen < limit:
            item = stack.pop()
            seen += 1
            kind = type_of(item)
            if kind in plain:
                if kind in containers:
                    stack.extend(as_list(item))
                elif kind is dict_type:
                    stack.extend(as_list(item.keys()))
                    stack.extend(as_list(item.values()))
                continue
            lie = lies(item)
            if lie:
                raise untrusted(f"the solution returned a {kind.__name__} that {lie}")

    return check_value


def _make_wrapping(checks, problems):
    """wrap_module(module, name): routes every callable of the solution module through `checks`
    (a problem found is appended to `problems`); answers why it could not ("" when it could).
    Built inside the recorder before the import: every reference is bound here."""
    import types

    snapshot, changed_since, check_value = checks
    as_list, is_instance, next_of, set_attr, vars_of, is_callable, untrusted = list, isinstance, next, setattr, vars, callable, Untrusted
    method_type, function_type, module_type, type_type, entry, base_exception = (
        types.MethodType, types.FunctionType, types.ModuleType, type, _entry, BaseException
    )
    static_type, class_method_type = staticmethod, classmethod

    def checked_call(function, args, kwargs):
        # Compared with the state right before the call, not the collection baseline: pytest itself
        # swaps hooks per test phase (7.x installs its own sys.unraisablehook around each call), and
        # what matters is what the solution's code changed while it ran.
        before = snapshot()
        result = function(*args, **kwargs)
        check_value(result)  # may run agent code (__eq__): before the state check
        changed = changed_since(before, snapshot())
        if changed:
            problems.append("the solution changed " + ", ".join(changed[:5]))
            raise untrusted(problems[-1])
        return result

    def guarded(function):
        request = yield
        while True:
            try:
                reply = (False, checked_call(function, request[0], request[1]))
            except base_exception as error:  # handed to _entry, which raises it in the caller
                reply = (True, error)
            request = yield reply

    def routed(function):
        generator = guarded(function)
        next_of(generator)
        return method_type(entry, (generator, function))

    def method(function):
        # Bound to instances, so it must be a function; its closure is reachable (a residual).
        def called(*args, **kwargs):
            return checked_call(function, args, kwargs)

        called.__name__ = function.__name__
        return called

    def wrap_class(cls):
        for attr, member in as_list(vars_of(cls).items()):
            if attr in ("__init__", "__new__", "__init_subclass__", "__class_getitem__"):
                continue
            if is_instance(member, function_type):
                set_attr(cls, attr, method(member))
            elif is_instance(member, static_type):
                set_attr(cls, attr, static_type(routed(member.__func__)))
            elif is_instance(member, class_method_type):
                set_attr(cls, attr, class_method_type(routed(member.__func__)))

    def wrap_module(module, name):
        if type_type(module) is not module_type:
            return "the solution module is not a module"
        namespace = vars_of(module)
        if "__getattr__" in namespace:
            return "the solution module defines __getattr__ (its names would bypass the checks)"
        for attr, value in as_list(namespace.items()):
            if attr.startswith("__") or is_instance(value, module_type):
                continue
            if is_instance(value, type_type):
                if value.__dict__.get("__module__") == name:
                    wrap_class(value)
            elif is_callable(value) and not type_type(value).__module__.startswith("typing"):
                namespace[attr] = routed(value)  # any callable: a partial or a cache returns values too
        return ""

    return wrap_module


def _entry(guarded, *args, **kwargs):
    """A solution function as the tests see it: `types.MethodType(_entry, (generator, function))`.

    Nothing here can be rebound: a method object over a tuple, and a generator (made by the
    recorder) whose frame holds the checks; this function looks up no global name. A recursive
    call (the generator is busy) goes straight to the function: the outer call is checked."""
    generator, function = guarded
    if generator.gi_running:
        return function(*args, **kwargs)
    failed, value = generator.send((args, kwargs))
    if failed:
        raise value
    return value


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
    plugin_recorder = _recorder(nonce_fd, records_fd, on_stack, allowed, _pristine(cells), _make_checks())
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
    """The pytest plugin of the `run` mode: it calls the tests and tells the recorder what happened.

    Its closures are reachable by agent code (pytest's plugin list): it checks nothing the recorder
    does not check itself; it only asks (`emit`), and once its cells were swapped the recorder
    writes its passes as failures (_pristine)."""
    import importlib
    import inspect

    import pytest

    state = {"problem": ""}
    untrusted = Untrusted

    def emit(message):
        return box[0].send(message)

    def record(item, outcome):
        code = getattr(getattr(item, "function", None), "__code__", None)
        where = [code.co_filename, code.co_name, code.co_firstlineno] if code is not None else ["", "", 0]
        return emit((item.nodeid, outcome, *where))

    class Plugin:
        def pytest_collection(self, session):
            emit(("<baseline>",))
            try:
                module = importlib.import_module(module_name)
            except BaseException as error:  # noqa: BLE001 - SystemExit at import too: a failed solution
                state["problem"] = f"importing the solution raised {type(error).__name__}"
                return None
            state["problem"] = emit(("<wrap>", module, module_name)) or ""
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
                problem = state["problem"] or emit(("<problem>",))
                if problem:
                    raise untrusted(problem)
                if code is None or code is not getattr(pyfuncitem.function, "__code__", None):
                    raise untrusted("the test function was replaced")
                returned = function(**kwargs)
                if inspect.isawaitable(returned) or inspect.isgenerator(returned):
                    close = getattr(returned, "close", None)
                    if close is not None:
                        close()
                    raise untrusted("async and generator tests are not run by this verifier (a pass would be unchecked)")
            except BaseException:
                record(pyfuncitem, "failed")
                raise
            record(pyfuncitem, "passed")
            return True

        def finish(self, exit_code, dumpable_off):
            emit(("<session>", "finished", str(exit_code), "undumpable" if dumpable_off else "dumpable", 0))

    allowed[0] = emit.__code__
    plugin = Plugin()
    # Every closure cell of the plugin (its recorder's box, its state): agent code can reach them
    # through pytest's plugin list; the recorder checks they still hold what they hold now.
    cells: list = []
    todo = [*vars(Plugin).values(), record, emit]
    while todo:
        function = todo.pop()
        for cell in getattr(function, "__closure__", None) or ():
            if all(cell is not seen for seen in cells):
                cells.append(cell)
                todo.append(cell.cell_contents)
    return plugin, cells


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
