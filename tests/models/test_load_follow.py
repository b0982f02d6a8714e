"""Threads and workers follow the load while a run lasts (issue 37 item 3): a cheap watch of the run
queue, a choice made again once the load level has moved and held, applied by the embedded model's
serving thread (threads) and the run's executor (workers); `rsi doctor` says what it would choose now."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi.models.embedded import tuning


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RSI_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(tuning.ENV_THREADS, raising=False)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def watch_of(loads: list[float], clock: Clock) -> tuning.LoadWatch:
    """A watch whose looks at the run queue read `loads` in turn (the last one repeats)."""
    seen = iter(loads)
    last = [loads[0]]

    def sample() -> float:
        last[0] = next(seen, last[0])
        return last[0]

    return tuning.LoadWatch(every_s=1.0, window_s=4.0, sample=sample, clock=clock)


def test_the_watch_averages_its_window_and_says_nothing_before() -> None:
    clock = Clock()
    watch = watch_of([0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], clock)
    assert watch.load() is None  # just started: not watched long enough
    loads = []
    for _ in range(8):
        clock.now += 1.0
        loads.append(watch.load())
    assert loads[3] == pytest.approx(1.2)  # 0, 0, 2, 2, 2 over the first 4 s
    assert loads[-1] == pytest.approx(2.0)  # the idle looks left the window
    clock.now += 0.1
    assert watch.load() == pytest.approx(2.0)  # no new look before every_s: no /proc read


def test_threads_are_chosen_again_once_a_new_level_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Idle at the start (2 threads); another job starts: once the busy level has held for the settle
    time, the threads are chosen again at that load, once, and the change is kept for the summary."""
    clock = Clock()
    asked: list[float] = []

    def choose(load: float) -> tuning.Choice:
        asked.append(load)
        return tuning.Choice(1 if load >= 0.5 else 2, f"at load {load:.1f}")

    follower = tuning.ThreadFollower(tuning.Choice(2, "idle probe"), 0.2, choose=choose, ncores=2, settle_s=3.0,
                                     watch=watch_of([0.1] * 5 + [1.4] * 100, clock), clock=clock)
    changed = []
    for _ in range(20):
        clock.now += 1.0
        new = follower.poll()
        if new is not None:
            changed.append((clock.now, new.value))
    assert len(changed) == 1 and changed[0][1] == 1, changed
    assert 8.0 <= changed[0][0] <= 12.0  # the window fills with the new load, then it holds for 3 s
    assert len(asked) == 1 and follower.level == "busy"
    assert follower.changes == [f"2 -> 1 at load {asked[0]:.1f} (busy)"]


def test_a_brief_spike_changes_nothing_and_a_pinned_count_never_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    follower = tuning.ThreadFollower(tuning.Choice(2, "idle"), 0.0, choose=lambda load: tuning.Choice(1, ""), ncores=2,
                                     settle_s=6.0, watch=watch_of([0.0] * 4 + [6.0] + [0.0] * 100, clock),
                                     clock=clock)
    for _ in range(30):
        clock.now += 1.0
        assert follower.poll() is None
    monkeypatch.setenv(tuning.ENV_THREADS, "2")
    pinned = tuning.ThreadFollower(tuning.Choice(2, "RSI_TORCH_THREADS=2"), choose=lambda load: tuning.Choice(1, ""),
                                   ncores=2, settle_s=0.0, watch=watch_of([9.0], clock), clock=clock)
    for _ in range(10):
        clock.now += 1.0
        assert pinned.poll() is None


def test_a_load_wandering_around_a_boundary_keeps_its_level() -> None:
    """2.0 is the busy | overloaded boundary on 2 cores: a load that wanders 1.7-2.4 around it for a
    long while changes nothing; one that goes past the band (2.6) does, and it comes back only under 1.6."""
    clock = Clock()
    wander = [1.7, 2.4, 2.2, 1.8, 2.3, 1.9, 2.4, 2.1] * 8
    follower = tuning.WorkerFollower(16, tuning.choose_workers(16, 1.0, 2), 1.0, ncores=2, settle_s=2.0,
                                     watch=watch_of(wander + [2.6] * 10 + [1.7] * 10 + [1.2] * 20, clock), clock=clock)
    levels = []
    for _ in range(len(wander) + 40):
        clock.now += 1.0
        follower.poll()
        levels.append(follower.level)
    assert set(levels[:len(wander)]) == {"busy"}
    assert levels[len(wander) + 9] == "overloaded"  # 2.6 held: past 2.5
    assert levels[len(wander) + 19] == "overloaded"  # 1.7: under 2.0, not under 1.6
    assert levels[-1] == "busy"
    assert [tuning.level_past_band(load, 2, "busy") for load in (0.45, 0.35, 2.4, 2.6)] == [
        "busy", "idle", "busy", "overloaded"]


def test_workers_follow_the_load_level() -> None:
    clock = Clock()
    follower = tuning.WorkerFollower(16, tuning.choose_workers(16, 0.0, 2), 0.0, ncores=2, settle_s=1.0,
                                     watch=watch_of([0.0] * 3 + [5.0] * 10 + [0.0] * 100, clock), clock=clock)
    values = []
    for _ in range(40):
        clock.now += 1.0
        new = follower.poll()
        if new is not None:
            values.append(new.value)
    assert values == [4, 16]  # overloaded: two per core; idle again: the whole batch


def test_the_serving_thread_applies_a_new_thread_count() -> None:
    """`EmbeddedModel._follow_load` (called between decoding steps) sets the serving thread's torch
    threads to the follower's new choice; a follower that fails is dropped, serving goes on."""
    torch = pytest.importorskip("torch")
    from rsi.models.embedded.backend import EmbeddedModel

    class Follower:
        def __init__(self, answer):
            self.answer = answer

        def poll(self):
            if isinstance(self.answer, Exception):
                raise self.answer
            return self.answer

    model = object.__new__(EmbeddedModel)  # no weights: only the hook is exercised
    before = torch.get_num_threads()
    try:
        model._follow = Follower(tuning.Choice(1, "busy"))
        model._follow_load()
        assert torch.get_num_threads() == 1 and model.threads.value == 1
        model._follow = Follower(OSError("no /proc"))
        model._follow_load()
        assert model._follow is None
    finally:
        torch.set_num_threads(before)


def test_doctor_says_what_it_would_choose_at_the_load_now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tuning, "current_load", lambda *a, **k: 1.5)
    monkeypatch.setattr(tuning, "cores", lambda: 2)
    monkeypatch.setattr(tuning, "race", lambda first, second, rounds=3: (0.010, 0.030))
    threads = tuning.choose_threads()
    assert threads.value == 1
    assert threads.why.startswith("at load 1.5 on 2 cores (busy): probe at load 1.5: 1 thread 10.0 ms, 2 threads 30.0 ms")
    assert "re-chosen while a run lasts" in threads.why
    workers = tuning.choose_workers(16)
    assert workers.why.startswith("load 1.5 on 2 cores (busy)") and "re-chosen while a run lasts" in workers.why
