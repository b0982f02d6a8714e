"""CPU settings chosen by measuring this machine: threads, number format, and their overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi.errors import UserInputError
from rsi.models.embedded import tuning


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RSI_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(tuning.ENV_THREADS, raising=False)
    monkeypatch.delenv(tuning.ENV_DTYPE, raising=False)
    return tmp_path / "cache"


def test_cpu_flags_are_read_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu avx2 avx512_bf16\n\nflags : other\n")
    assert tuning.cpu_flags(info) == {"fpu", "avx2", "avx512_bf16"}
    assert tuning.cpu_name(info) == "Test CPU"
    assert tuning.cpu_flags(tmp_path / "missing") == set()


def test_load_levels_follow_the_core_count() -> None:
    assert tuning.load_level(0.1, 2) == "idle"
    assert tuning.load_level(1.0, 2) == "busy"
    assert tuning.load_level(4.0, 2) == "overloaded"
    assert tuning.load_level(4.0, 16) == "busy"


def test_threads_override_and_bad_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tuning.ENV_THREADS, "3")
    assert tuning.choose_threads() == tuning.Choice(3, "RSI_TORCH_THREADS=3")
    monkeypatch.setenv(tuning.ENV_THREADS, "two")
    with pytest.raises(UserInputError, match="RSI_TORCH_THREADS"):
        tuning.choose_threads()


def test_measured_threads_pick_the_faster_probe_and_are_cached(private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One load reading for both calls: the choice names the load it was made at, and a shared machine's load moves
    # between two calls (the cache is keyed by the load level, which a moving load can also cross).
    monkeypatch.setattr(tuning, "current_load", lambda *args, **kwargs: 0.4)
    choice = tuning.choose_threads()
    if tuning.cores() == 1:
        assert choice.value == 1
        return
    assert "probe" in choice.why
    one_ms, many_ms = (float(part.split(" ms")[0].rsplit(" ", 1)[1]) for part in choice.why.split(", ")[0:2])
    assert choice.value == (1 if one_ms <= many_ms else tuning.cores())
    assert (private_cache / "tuning.json").is_file()
    assert tuning.choose_threads() == choice  # the same load level reads the cached measurement


def test_dtype_override_and_contract_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    assert tuning.choose_dtype("float32", "cpu").value == "float32"
    assert tuning.choose_dtype("bfloat16", "cuda").value == "bfloat16"
    monkeypatch.setenv(tuning.ENV_DTYPE, "bfloat16")
    assert tuning.choose_dtype("float32", "cpu") == tuning.Choice("bfloat16", "RSI_DTYPE=bfloat16")
    monkeypatch.setenv(tuning.ENV_DTYPE, "int3")
    with pytest.raises(UserInputError, match="RSI_DTYPE"):
        tuning.choose_dtype("float32", "cpu")


def test_narrow_format_needs_the_instructions_and_a_faster_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tuning.ENV_THREADS, "1")
    without = tuning.choose_dtype("bfloat16", "cpu", flags=set())
    assert without.value == "float32" and "avx512_bf16" in without.why
    measured = tuning.choose_dtype("bfloat16", "cpu", flags={"avx512_bf16"})
    narrow_ms, wide_ms = (float(part.split(" ms")[0].rsplit(" ", 1)[1]) for part in measured.why.split(", ")[0:2])
    assert measured.value == ("bfloat16" if narrow_ms < wide_ms else "float32")


def test_vllm_cpu_env_binds_one_core_when_one_thread_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tuning.ENV_THREADS, "1")
    chosen = tuning.vllm_cpu_env({})
    bind = chosen["VLLM_CPU_OMP_THREADS_BIND"]
    if tuning.cores() > 1:
        assert bind.value.isdigit() and "one core" in bind.why
    assert "LD_PRELOAD" in chosen
    mine = tuning.vllm_cpu_env({"VLLM_CPU_OMP_THREADS_BIND": "2-3", "LD_PRELOAD": "/x.so"})
    assert mine["VLLM_CPU_OMP_THREADS_BIND"] == tuning.Choice("2-3", "set by the caller")
    assert "/x.so" in str(mine["LD_PRELOAD"].value)


def test_workers_fill_the_batch_unless_the_machine_is_overloaded() -> None:
    assert tuning.choose_workers(8, load=0.5, ncores=2).value == 8  # idle
    assert tuning.choose_workers(8, load=1.9, ncores=2).value == 8  # busy, not over the cores
    overloaded = tuning.choose_workers(8, load=10.0, ncores=2)
    assert overloaded.value == 4 and "overloaded" in overloaded.why  # two per core
    assert tuning.choose_workers(3, load=10.0, ncores=2).value == 3  # never above max_batch
    assert tuning.choose_workers(8, load=40.0, ncores=16).value == 8  # 32 per core would exceed the batch


def test_run_workers_fill_the_embedded_batch_on_the_local_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    from rsi.contracts.schema import ServingSpec

    monkeypatch.setattr(tuning, "current_load", lambda *a, **k: 0.0)  # an idle machine, whatever runs beside

    embedded4, embedded8 = ServingSpec(max_batch=4), ServingSpec(max_batch=8)
    remote = ServingSpec(backend="openai", base_url="http://x", max_batch=16)
    assert tuning.run_workers("local", [embedded4, embedded8, remote]) == 8  # the largest embedded batch
    assert tuning.run_workers("local", [ServingSpec(max_batch=1)]) == 2  # never fewer than 2
    assert tuning.run_workers("local", [remote]) is None  # no embedded model: the executor's default
    assert tuning.run_workers("slurm", [embedded8]) is None  # SLURM keeps its array parallelism


def _fake_proc(tmp_path: Path, running: int, own_states: list[str]) -> tuple[Path, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    stat = tmp_path / "stat"
    stat.write_text(f"cpu  1 2 3 4\nctxt 99\nprocs_running {running}\nprocs_blocked 0\n")
    tasks = tmp_path / "task"
    for tid, state in enumerate(own_states):
        (tasks / str(tid)).mkdir(parents=True)
        (tasks / str(tid) / "stat").write_text(f"{tid} (python (x) y) {state} 1 2 3\n")
    return stat, tasks


def test_the_load_now_counts_other_processes_runnable_tasks_not_ours(tmp_path: Path) -> None:
    stat, tasks = _fake_proc(tmp_path, running=5, own_states=["R", "S", "R"])
    assert tuning.current_load(stat, tasks, watch_s=0.01) == 3.0
    stat, tasks = _fake_proc(tmp_path / "b", running=1, own_states=["R"])
    assert tuning.current_load(stat, tasks, watch_s=0.01) == 0.0


def test_without_a_run_queue_to_read_the_load_average_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tuning.os, "getloadavg", lambda: (7.5, 1.0, 1.0))
    assert tuning.current_load(tmp_path / "missing", tmp_path, watch_s=0.01) == 7.5


def test_busy_processes_show_in_the_load_now_at_once() -> None:
    """Two processes spinning are two runnable tasks now, whatever the 1-minute average says yet."""
    import subprocess
    import sys

    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        assert tuning.current_load(watch_s=0.5) >= 1.9
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


@pytest.mark.parametrize(("load", "cores", "threads"), [(0.2, 2, 2), (1.2, 2, 1), (2.6, 2, 1), (3.0, 16, 13)])
def test_threads_never_exceed_the_cores_the_load_leaves_free(private_cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                             load: float, cores: int, threads: int) -> None:
    """Even where the level's probe favoured every core (a probe made when the level's load was lower), a
    CPU-bound process beside the model gets its core: 2 threads beside it collapse (issue 37: 8.3 tokens/s
    against 110.6 with 1)."""
    monkeypatch.delenv(tuning.ENV_THREADS, raising=False)
    monkeypatch.setattr(tuning, "cores", lambda: cores)
    monkeypatch.setattr(tuning, "race", lambda first, second, rounds=3: (0.030, 0.010))  # every core wins the probe
    choice = tuning.choose_threads(use_cache=False, load=load)
    assert choice.value == threads
    assert ("capped at" in choice.why) == (threads < cores)
