"""CPU settings of the embedded model, chosen by measuring this machine now, not assumed from another.

- **torch threads**: on an oversubscribed machine OpenMP's spinning threads collapse (measured at
  a load average of 13 on 2 cores: 0.7 tok/s with 2 threads, 6 tok/s with 1; plain transformers at
  batch 8 under load: 20.6 tok/s with 1 thread, 3.3 with 2). So a short probe shaped like one
  decoding step of the embedded model (8 rows through 12 small MLP blocks) is timed with 1 thread
  and with every core, alternately, and the faster wins. The answer depends on the load, so it is
  cached per machine and load level (idle / busy / overloaded, from the load now against the core
  count: `current_load`) for `CACHE_TTL_S`. It never exceeds the cores the other runnable processes
  leave free: a parallel region runs at the pace of its slowest thread, and one thread sharing a core
  with another process drags every step (a cached probe of the level, made when the load was lower,
  chose 2 threads beside a CPU-bound process, which then flipped 2 -> 1 -> 2 six times in 12 minutes;
  bench/RESULTS.md "shared CPU run").
- **linear layers**: on prepacked oneDNN weights where that runs (`rsi.models.embedded.packed_linear`); the
  probe below times the same products, so the other choices are made for the kernels in use.
- **number format**: bfloat16 only where the CPU has bfloat16 instructions (`avx512_bf16` or
  `amx_bf16` in /proc/cpuinfo) AND the same probe runs faster in it; elsewhere bfloat16 is emulated
  (measured on an AVX2 CPU: 35.2 tok/s in bfloat16 against 74.1 in float32), so float32. A GPU
  gets the format the contract asks for.
- **workers**: attempts mostly wait on the model, and a decoding step of 8 rows costs little more
  than one of 1 (bench/RESULTS.md "run throughput"), so a run keeps `max_batch` attempts in flight;
  on an overloaded machine (load above the core count at the run's start) two per core, since more
  rows there only stretch each model call past model_s.

Threads and workers **follow the load while a run lasts**: the choices above are made at the start,
from the load then, but another job may start (or end) mid-run. Measured on 2 cores: batched decoding
with 2 threads fell from 110.6 to 8.3 tokens/s when another CPU-bound process started, where 1 thread
kept its speed. So a `LoadWatch` looks at the run queue cheaply (one read of /proc at most every
`FOLLOW_SAMPLE_S`, averaged over `FOLLOW_WINDOW_S`), and once the load level (idle / busy /
overloaded) has moved and held for `FOLLOW_SETTLE_S`, the choice is made again at the new level: the
embedded model's serving thread re-chooses its torch threads between decoding steps (`ThreadFollower`:
from the cached probe of that level, or a fresh probe), and the run re-chooses its worker count
(`WorkerFollower`, applied through the executor's `resize`). A setting pinned by the user
(`RSI_TORCH_THREADS`, `--workers`) is never changed.

`RSI_TORCH_THREADS` and `RSI_DTYPE` override the measured choice. `rsi doctor` shows every choice
with its reason (`model_settings`), at the load now.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ENV_THREADS = "RSI_TORCH_THREADS"
ENV_DTYPE = "RSI_DTYPE"
DTYPES = ("bfloat16", "float32", "float16")
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
FP16_FLAGS = ("avx512_fp16", "amx_fp16")
CACHE_TTL_S = 6 * 3600.0
PROBE_ROUNDS = 3
PROBE_VERSION = 3  # part of the cache key: a changed probe is measured afresh (3: packed linears)


@dataclass(frozen=True)
class Choice:
    """One setting and why it was chosen (what `rsi doctor` prints)."""

    value: int | str
    why: str


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    """The instruction-set flags of the first CPU (empty where /proc/cpuinfo is unreadable)."""
    with contextlib.suppress(OSError):
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(("flags", "Features")):
                return set(line.partition(":")[2].split())
    return set()


def cpu_name(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    with contextlib.suppress(OSError):
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine()


def cores() -> int:
    with contextlib.suppress(AttributeError):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


LOAD_WATCH_S = 1.0  # how long `current_load` watches the run queue
LOAD_SAMPLES = 20
_loads_seen: dict[tuple[Path, Path, float], tuple[float, float]] = {}  # what was watched -> (monotonic time, load)
LOAD_REUSE_S = 30.0  # one watch serves every choice made while a run starts


def _runnable(stat: Path, own_tasks: Path) -> int | None:
    """Tasks runnable on the machine right now, less this process's own (None: /proc lacks it)."""
    try:
        running = next(int(line.split()[1]) for line in stat.read_text().splitlines() if line.startswith("procs_running"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    mine = 0
    with contextlib.suppress(OSError):
        for task in own_tasks.iterdir():
            with contextlib.suppress(OSError, IndexError):  # a thread may end while it is read
                mine += (task / "stat").read_text().rpartition(")")[2].split()[0] == "R"
    return max(0, running - mine)


def current_load(stat: Path = Path("/proc/stat"), own_tasks: Path = Path("/proc/self/task"),
                 watch_s: float = LOAD_WATCH_S) -> float:
    """The machine's load now: runnable tasks other than this process's, averaged over `watch_s`.

    Not the 1-minute load average: it trails what runs by a minute or more. A run started right after
    another one ended (a nightly job after the tests, a benchmark's next row) read 2.0-2.4 on an idle
    2-core machine, judged it overloaded and kept 4 attempts in flight instead of 16: 221 attempts in
    6 minutes against 306 from an idle start (bench/RESULTS.md, "run throughput against b80c5d3 (2026-12-03, 62c059c)"). Where /proc cannot say,
    the 1-minute average is what there is. A watch is reused for `LOAD_REUSE_S` within a process.
    """
    watched = (stat, own_tasks, watch_s)
    seen = _loads_seen.get(watched)
    if seen is not None and time.monotonic() - seen[0] < LOAD_REUSE_S:
        return seen[1]
    counts = []
    for index in range(LOAD_SAMPLES):
        count = _runnable(stat, own_tasks)
        if count is None:
            return os.getloadavg()[0]
        counts.append(count)
        if index < LOAD_SAMPLES - 1:
            time.sleep(watch_s / LOAD_SAMPLES)
    load = sum(counts) / len(counts)
    _loads_seen[watched] = (time.monotonic(), load)
    return load


def load_level(load: float | None = None, ncores: int | None = None) -> str:
    """'idle', 'busy' or 'overloaded': the load now (`current_load`) against the core count."""
    load = current_load() if load is None else load
    ratio = load / max(1, ncores or cores())
    return "idle" if ratio < 0.25 else "busy" if ratio < 1.0 else "overloaded"


LEVELS = ("idle", "busy", "overloaded")
LEVEL_BAND = 0.25  # while a run lasts, a level is left only past its boundary by a quarter of the boundary


def level_past_band(load: float, ncores: int, current: str) -> str:
    """`load_level` as seen from `current`: a load within LEVEL_BAND of a boundary keeps the side it was on.

    Why: a load that wanders around a boundary (2.0 on 2 cores: busy | overloaded) flipped the threads
    1 <-> 2 about 18 times in 17 minutes of one benchmark, each flip a new OpenMP team; leaving busy
    for overloaded now takes 2.5 and coming back takes under 1.6.
    """
    level = load_level(load, ncores)
    if LEVELS.index(level) > LEVELS.index(current):
        return load_level(load / (1 + LEVEL_BAND), ncores)
    if LEVELS.index(level) < LEVELS.index(current):
        return load_level(load * (1 + LEVEL_BAND), ncores)
    return level


def pick_device(device: str | None) -> str:
    """`device`, else `$RSI_DEVICE`, else CUDA when present, else the CPU."""
    chosen = device or os.environ.get("RSI_DEVICE")
    if chosen:
        return chosen
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


# -- the probe -------------------------------------------------------------------------------------


def _probe_weights(dtype: str) -> list[Any]:
    import torch

    generator = torch.Generator().manual_seed(0)
    shapes = [(1536, 576), (1536, 576), (576, 1536)]  # one SmolLM2-135M MLP block, (out, in) as nn.Linear keeps them
    return [(torch.randn(*s, generator=generator) * 0.02).to(getattr(torch, dtype)) for s in shapes]


def probe_step_s(
    threads: int, dtype: str = "float32", layers: int = 12, repeats: int = 3, give_up_s: float = float("inf")
) -> float:
    """Seconds for one decoding-step-shaped workload (8 rows x `layers` MLP blocks) at `threads` threads.

    The best of `repeats`: contention from other processes only ever slows a run down, so the
    fastest run is the one closest to what the setting itself costs. Stops repeating once
    `give_up_s` is spent (a setting already that slow has lost; on an overloaded machine spinning
    threads can take seconds per run).
    """
    import torch

    from rsi.models.embedded.packed_linear import packed_linear

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        weights = _probe_weights(dtype)
        up, gate, down = (packed_linear(w) for w in weights)  # the products the model itself will run
        x = torch.randn(8, 576).to(weights[0].dtype)
        best = float("inf")
        spent = 0.0
        with torch.inference_mode():
            for _ in range(repeats):
                started = time.perf_counter()
                h = x
                for _ in range(layers):
                    h = down(torch.nn.functional.silu(up(h)) * gate(h))
                    h = h * torch.rsqrt(h.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(h.dtype)
                took = time.perf_counter() - started
                best, spent = min(best, took), spent + took
                if spent > give_up_s:
                    break
        return best
    finally:
        torch.set_num_threads(previous)


def race(first: tuple[int, str], second: tuple[int, str], rounds: int = PROBE_ROUNDS) -> tuple[float, float]:
    """Median probe seconds of two (threads, dtype) settings, measured alternately (so load drifts hit both).

    The second setting gives up on a round once it has spent 3x the first's time: it has lost.
    """
    a: list[float] = []
    b: list[float] = []
    for _ in range(rounds):
        a.append(probe_step_s(*first))
        b.append(probe_step_s(*second, give_up_s=3 * (3 * a[-1])))  # 3x what 3 runs of the first took
    return sorted(a)[len(a) // 2], sorted(b)[len(b) // 2]


# -- the cache -------------------------------------------------------------------------------------


def _cache_file() -> Path:
    from rsi.models.embedded.weights import cache_root

    return cache_root() / "tuning.json"


def _machine_key() -> str:
    from rsi.models.embedded.packed_linear import packing_available

    kernels = "" if packing_available() else "|plain linear"  # the probe times the products the model runs
    return f"{cpu_name()}|{cores()} cores|{platform.machine()}|probe v{PROBE_VERSION}{kernels}"


def _cached(kind: str, level: str) -> dict[str, Any] | None:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        entry = json.loads(_cache_file().read_text(encoding="utf-8"))[_machine_key()][f"{kind}:{level}"]
        if time.time() - float(entry["at"]) < CACHE_TTL_S:
            return dict(entry)
    return None


def _remember(kind: str, level: str, entry: dict[str, Any]) -> None:
    from rsi.atomic import write_text_atomic

    path = _cache_file()
    data: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault(_machine_key(), {})[f"{kind}:{level}"] = {**entry, "at": time.time()}
    with contextlib.suppress(OSError):  # a read-only cache costs a re-measurement next time, nothing more
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True))


T = TypeVar("T")


# -- the choices -----------------------------------------------------------------------------------


def one_torch_thread_here() -> None:
    """Give the calling thread one torch (OpenMP) thread, fixed now, so it never starts a team of its own.

    Why: libgomp, torch's OpenMP runtime, keeps a team of worker threads for every thread that ran a
    parallel region with more than one thread, and once the teams' threads outnumber the cores it
    stops spinning between regions and sleeps instead: every small op then pays a wake-up. Measured
    on 2 cores (2026-12-03 at a65af5a), the model's serving thread ran a copy, a softmax or a small product
    3-7x slower once the main thread had run torch with 2 threads, and as fast as alone otherwise;
    no `OMP_WAIT_POLICY` or `GOMP_SPINCOUNT` setting gave both back. So the thread that owns a model
    runs its torch work with the chosen threads, and the thread that created it keeps one.

    `torch.get_num_threads()` makes torch set this thread's OpenMP count now: a thread takes the
    process-wide value on its first parallel op, and the model's thread changes that value later.
    """
    import torch

    torch.set_num_threads(1)
    torch.get_num_threads()


def in_own_thread(work: Callable[[], T]) -> T:
    """`work()` on a thread of its own, which ends with it, and with it the OpenMP team it started.

    For one-off torch work with all cores (converting weights) in a process that will serve a model:
    see `one_torch_thread_here`. Exceptions propagate to the caller.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rsi-torch-work") as pool:  # joined on exit
        return pool.submit(work).result()


def pinned_threads() -> Choice | None:
    """The thread count the user pinned (`$RSI_TORCH_THREADS`), or None: measured, and followed."""
    configured = os.environ.get(ENV_THREADS, "").strip()
    if configured:
        try:
            return Choice(max(1, int(configured)), f"{ENV_THREADS}={configured}")
        except ValueError:
            from rsi.errors import UserInputError

            raise UserInputError(f"{ENV_THREADS}={configured!r}: expected a whole number of threads") from None
    return None


def choose_threads(*, use_cache: bool = True, load: float | None = None) -> Choice:
    """Torch intra-op threads: `$RSI_TORCH_THREADS`, else the faster of 1 and all cores, measured at the
    load level of `load` (default: the load now, `current_load`); one probe per level is cached."""
    pinned = pinned_threads()
    if pinned is not None:
        return pinned
    ncores = cores()
    if ncores == 1:
        return Choice(1, "one core")
    load = current_load() if load is None else load
    level = load_level(load, ncores)
    entry = _cached("threads", level) if use_cache else None
    if entry is None:
        one, many = race((1, "float32"), (ncores, "float32"))
        entry = {"one_s": one, "many_s": many, "load": load}
        _remember("threads", level, entry)
    one, many = float(entry["one_s"]), float(entry["many_s"])
    threads = 1 if one <= many else ncores
    free = max(1, ncores - int(load + 0.5))  # the cores other runnable processes leave free
    capped = f"; capped at {free}: the cores load {load:.1f} leaves free" if threads > free else ""
    return Choice(
        min(threads, free),
        f"at load {load:.1f} on {ncores} cores ({level}): probe at load {float(entry['load']):.1f}: 1 thread "
        f"{one * 1000:.1f} ms, {ncores} threads {many * 1000:.1f} ms per decoding-step probe{capped}; "
        "re-chosen while a run lasts when the load level changes",
    )


def choose_dtype(requested: str, device: str, *, use_cache: bool = True, flags: set[str] | None = None) -> Choice:
    """The number format to load in: `$RSI_DTYPE`, else `requested` on a GPU or when it is float32,
    else (a narrow format on a CPU) the narrow one only where the CPU has its instructions and the
    probe runs faster in it."""
    configured = os.environ.get(ENV_DTYPE, "").strip()
    if configured:
        if configured not in DTYPES:
            from rsi.errors import UserInputError

            raise UserInputError(f"{ENV_DTYPE}={configured!r}: expected one of {', '.join(DTYPES)}")
        return Choice(configured, f"{ENV_DTYPE}={configured}")
    if not device.startswith("cpu"):
        return Choice(requested, f"asked by the contract ([serving] dtype) on {device}")
    if requested == "float32":
        return Choice("float32", "asked by the contract ([serving] dtype)")
    needed = BF16_FLAGS if requested == "bfloat16" else FP16_FLAGS
    have = sorted((cpu_flags() if flags is None else flags) & set(needed))
    if not have:
        return Choice("float32", f"{requested} asked, but this CPU lacks {'/'.join(needed)}: it would be emulated")
    threads = int(choose_threads(use_cache=use_cache).value)
    level = load_level()
    entry = _cached(f"dtype-{requested}-{threads}t", level) if use_cache else None
    if entry is None:
        wide, narrow = race((threads, "float32"), (threads, requested))
        entry = {"narrow_s": narrow, "wide_s": wide}
        _remember(f"dtype-{requested}-{threads}t", level, entry)
    narrow, wide = float(entry["narrow_s"]), float(entry["wide_s"])
    measured = f"probe: {requested} {narrow * 1000:.1f} ms, float32 {wide * 1000:.1f} ms ({', '.join(have)})"
    return Choice(requested, measured) if narrow < wide else Choice("float32", measured)


def choose_workers(max_batch: int, load: float | None = None, ncores: int | None = None) -> Choice:
    """Attempts in flight for a run on the embedded model: enough to fill its batch, except on an
    overloaded machine (load above the core count), where two per core (at most `max_batch`).

    Why the exception: the model's share of an overloaded CPU is what it is, so more rows only
    stretch each request; measured at load 10-12 on 2 cores, 8 in flight made model calls overrun
    model_s (7-10 errors in 6 minutes) where 4 made fewer (bench/RESULTS.md, "run throughput against b80c5d3").
    """
    load = current_load() if load is None else load
    ncores = ncores or cores()
    level = load_level(load, ncores)
    if level == "overloaded":
        fewer = max(2, min(max_batch, 2 * ncores))
        return Choice(fewer, f"load {load:.1f} on {ncores} cores (overloaded): two per core, so each model call keeps "
                             f"a share of the CPU that finishes inside model_s (max_batch={max_batch}); "
                             "re-chosen while a run lasts when the load level changes")
    return Choice(
        max(2, max_batch),
        f"load {load:.1f} on {ncores} cores ({level}): fills the embedded model's batch (max_batch={max_batch}); a "
        f"step of {max_batch} rows costs little more than one row (bench/RESULTS.md, run throughput); re-chosen "
        "while a run lasts when the load level changes",
    )


def run_workers(executor: str, servings: Iterable[Any]) -> int | None:
    """The default `--workers` of a run: on the local executor with an embedded model among the
    configurations' `[serving]`s, `choose_workers` of its largest `max_batch`; else None (the
    executor's own default: the local one's per-core count, SLURM's array parallelism)."""
    follower = follow_workers(executor, servings)
    return None if follower is None else int(follower.choice.value)


def follow_workers(executor: str, servings: Iterable[Any]) -> WorkerFollower | None:
    """`run_workers`'s choice, as a `WorkerFollower` that re-chooses it while the run lasts (None where
    `run_workers` is None: no embedded model, or not the local executor)."""
    batches = [s.max_batch for s in servings if s.backend == "embedded"]
    if executor != "local" or not batches:
        return None
    load = current_load()
    return WorkerFollower(max(batches), choose_workers(max(batches), load), load)


# -- following the load while a run lasts ------------------------------------------------------------

FOLLOW_SAMPLE_S = 0.25  # one look at the run queue at most this often (a read of /proc/stat and our tasks)
FOLLOW_WINDOW_S = 5.0  # the load is the mean of the looks of this long
FOLLOW_SETTLE_S = 5.0  # a new load level must hold this long before a choice is made again


class LoadWatch:
    """The machine's load while a run lasts: `_runnable` (other processes' runnable tasks) looked at
    no more often than `every_s`, averaged over the last `window_s`. Cheap enough to call between
    decoding steps; where /proc cannot say, the 1-minute load average."""

    def __init__(self, every_s: float | None = None, window_s: float | None = None,
                 sample: Callable[[], float | None] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s = FOLLOW_SAMPLE_S if every_s is None else every_s
        self.window_s = FOLLOW_WINDOW_S if window_s is None else window_s
        self.clock = clock
        self.sample = sample or (lambda: _runnable(Path("/proc/stat"), Path("/proc/self/task")))
        self._looks: list[tuple[float, float]] = []  # (when, runnable)
        self._since: float | None = None  # the first look

    def load(self) -> float | None:
        """The mean load of the looks in the last window, once watched for most of a window (None before)."""
        now = self.clock()
        if not self._looks or now - self._looks[-1][0] >= self.every_s:
            seen = self.sample()
            self._looks.append((now, os.getloadavg()[0] if seen is None else float(seen)))
            self._looks = [(at, n) for at, n in self._looks if now - at <= self.window_s]
            self._since = now if self._since is None else self._since
        if self._since is None or now - self._since < self.window_s * 0.8:
            return None  # not watched long enough to say
        return sum(n for _, n in self._looks) / len(self._looks)


class LevelFollow:
    """A choice made at one load level, and when to make it again: once the watched load's level
    (`level_past_band`: a boundary is crossed only by a margin) differs from it and has held for
    `settle_s`. `poll` returns the load then (else None)."""

    def __init__(self, load: float, watch: LoadWatch | None = None, settle_s: float | None = None,
                 ncores: int | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.ncores = ncores or cores()
        self.level = load_level(load, self.ncores)
        self.watch = watch or LoadWatch(clock=clock)
        self.settle_s = FOLLOW_SETTLE_S if settle_s is None else settle_s
        self.clock = clock
        self._moved_at: float | None = None
        self.changes: list[str] = []  # one line per choice made again ("2 -> 1 at load 1.3 (busy)")

    def moved(self) -> float | None:
        load = self.watch.load()
        if load is None:
            return None
        level = level_past_band(load, self.ncores, self.level)
        if level == self.level:
            self._moved_at = None
            return None
        now = self.clock()
        if self._moved_at is None:
            self._moved_at = now
        if now - self._moved_at < self.settle_s:
            return None
        self.level, self._moved_at = level, None
        return load

    def _changed(self, old: Choice, new: Choice, load: float) -> Choice | None:
        if new.value == old.value:
            return None
        self.changes.append(f"{old.value} -> {new.value} at load {load:.1f} ({self.level})")
        return new


class ThreadFollower(LevelFollow):
    """The embedded model's torch threads while it serves: `poll()` between decoding steps returns a new
    choice (the caller applies it with `torch.set_num_threads` on its serving thread) once the load
    level has moved and held, else None. A pinned count (`RSI_TORCH_THREADS`) or one core: never."""

    def __init__(self, choice: Choice, load: float | None = None, *,
                 choose: Callable[[float], Choice] | None = None, **follow: Any) -> None:
        fixed = pinned_threads() is not None or (follow.get("ncores") or cores()) == 1
        super().__init__(0.0 if fixed else current_load() if load is None else load, **follow)
        self.choice, self.fixed = choice, fixed
        self.choose = choose or (lambda now: choose_threads(load=now))

    def poll(self) -> Choice | None:
        if self.fixed:
            return None
        load = self.moved()
        if load is None:
            return None
        old, self.choice = self.choice, self.choose(load)
        return self._changed(old, self.choice, load)


class WorkerFollower(LevelFollow):
    """A run's worker count while it lasts (`choose_workers` at each new load level): `poll()` from the
    run's loop returns a new choice once the level has moved and held, else None."""

    def __init__(self, max_batch: int, choice: Choice, load: float, **follow: Any) -> None:
        super().__init__(load, **follow)
        self.max_batch, self.choice = max_batch, choice

    def poll(self) -> Choice | None:
        load = self.moved()
        if load is None:
            return None
        old, self.choice = self.choice, choose_workers(self.max_batch, load, self.ncores)
        return self._changed(old, self.choice, load)


def model_settings(requested_dtype: str = "bfloat16", max_batch: int | None = None) -> dict[str, Choice]:
    """Every choice the embedded model would make here now (for `rsi doctor`); `max_batch` defaults to
    `[serving] max_batch`'s own default."""
    from rsi.contracts.schema import ServingSpec
    from rsi.models.embedded.packed_linear import packing_choice

    max_batch = ServingSpec().max_batch if max_batch is None else max_batch
    device = pick_device(None)
    packed, why = packing_choice()
    return {
        "linear layers": Choice("packed" if packed and device.startswith("cpu") else "plain", why),
        "torch threads": choose_threads(),
        "number format": choose_dtype(requested_dtype, device),
        "workers": choose_workers(max_batch),
    }


TCMALLOC_PATHS = (
    "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
    "/usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4",
    "/usr/lib64/libtcmalloc_minimal.so.4",
)


def vllm_cpu_env(environ: dict[str, str] | None = None) -> dict[str, Choice]:
    """CPU settings for an owned vLLM-CPU server (environment variable -> choice); the caller's own wins.

    - `VLLM_CPU_OMP_THREADS_BIND`: vLLM binds one OpenMP thread per core it is given. Where the
      thread probe says one thread beats all cores (a loaded machine), it gets one core, so its
      threads do not spin against other processes; else vLLM's own `auto` binding.
    - `LD_PRELOAD`: vLLM's CPU guide recommends tcmalloc for its many small allocations; preloaded
      when the library is installed, and said so when it is not.
    """
    environ = dict(os.environ) if environ is None else environ
    chosen: dict[str, Choice] = {}
    if "VLLM_CPU_OMP_THREADS_BIND" in environ:
        chosen["VLLM_CPU_OMP_THREADS_BIND"] = Choice(environ["VLLM_CPU_OMP_THREADS_BIND"], "set by the caller")
    else:
        threads = choose_threads()
        if threads.value == 1 and cores() > 1:
            first = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
            chosen["VLLM_CPU_OMP_THREADS_BIND"] = Choice(str(first), f"one core: {threads.why}")
        else:
            chosen["VLLM_CPU_OMP_THREADS_BIND"] = Choice("auto", f"all cores: {threads.why}")
    found = next((p for p in TCMALLOC_PATHS if Path(p).is_file()), None)
    preload = environ.get("LD_PRELOAD", "")
    if found is None:
        chosen["LD_PRELOAD"] = Choice(preload, "tcmalloc not installed (apt install libtcmalloc-minimal4): system malloc")
    elif found in preload:
        chosen["LD_PRELOAD"] = Choice(preload, "set by the caller")
    else:
        chosen["LD_PRELOAD"] = Choice(":".join(p for p in (found, preload) if p), "tcmalloc, as vLLM's CPU guide advises")
    return chosen
