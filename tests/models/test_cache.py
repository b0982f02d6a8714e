"""The response cache (rsi.models.cache): only exact requests are served, under the weights that made them;
concurrent writers lose nothing; a kill mid-write leaves a readable cache; the real float32 model's reply
comes back from it unchanged."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rsi.models.base import ChatMessage, GenerationRequest
from rsi.models.cache import CachedModel, CachedQueuedModel, ModelIdentity, ReplyCache
from rsi.models.scripted import ScriptedModel


def request(prompt: str = "add two numbers", **kwargs) -> GenerationRequest:
    kwargs.setdefault("max_tokens", 16)
    return GenerationRequest(messages=[ChatMessage(role="user", content=prompt)], **kwargs)


def identity(**changes) -> ModelIdentity:
    fields = dict(backend="embedded", model="smol", base_digest="b" * 64, dtype="float32", numerics="torch=x",
                  adapters={"alpha": "a" * 64}, greedy_exact=True, seeded_exact=True)
    fields.update(changes)
    return ModelIdentity(**fields)


def counting_model() -> ScriptedModel:
    """Answers with a fresh text per call, so a served reply is told apart from a new one."""
    calls = iter(range(10**6))
    return ScriptedModel(lambda req: [f"reply {next(calls)}" for _ in range(req.n)])


@pytest.fixture
def cache(tmp_path: Path) -> ReplyCache:
    return ReplyCache(f"sqlite:///{tmp_path / 'runs' / 'cache.sqlite'}")


def test_only_exact_requests_are_cacheable() -> None:
    exact = identity()
    assert exact.exact(request())  # greedy in float32
    assert exact.exact(request(temperature=0.7, seed=3))  # a seeded sample, on a backend proven per-seed exact
    assert not exact.exact(request(temperature=0.7))  # unseeded: never
    assert not identity(seeded_exact=False).exact(request(temperature=0.7, seed=3))
    assert not identity(greedy_exact=False).exact(request())
    assert not exact.exact(request(specialist="beta"))  # weights it cannot name


def test_the_key_changes_with_weights_dtype_seed_and_sampling() -> None:
    base = identity()
    key = base.key(request(temperature=0.7, seed=3))
    assert key == identity().key(request(temperature=0.7, seed=3))  # deterministic
    others = {
        "adapter": base.with_adapter("alpha", "c" * 64).key(request(temperature=0.7, seed=3, specialist="alpha")),
        "specialist": base.key(request(temperature=0.7, seed=3, specialist="alpha")),
        "dtype": identity(dtype="bfloat16").key(request(temperature=0.7, seed=3)),
        "base": identity(base_digest="d" * 64).key(request(temperature=0.7, seed=3)),
        "numerics": identity(numerics="torch=y").key(request(temperature=0.7, seed=3)),
        "seed": base.key(request(temperature=0.7, seed=4)),
        "greedy": base.key(request(seed=3)),
        "temperature": base.key(request(temperature=0.8, seed=3)),
        "max_tokens": base.key(request(temperature=0.7, seed=3, max_tokens=17)),
        "n": base.key(request(temperature=0.7, seed=3, n=2)),
    }
    assert key not in others.values()
    assert len(set(others.values())) == len(others)
    # greedy rows keep the argmax: the seed and top_p change nothing, so they do not split the key
    assert base.key(request(seed=3)) == base.key(request(seed=9, top_p=0.5)) == base.key(request())


def test_rsi_cache_off_asks_the_model_and_keeps_nothing(cache: ReplyCache, monkeypatch: pytest.MonkeyPatch) -> None:
    model = CachedModel(counting_model(), cache, identity(), origin="r")
    monkeypatch.setenv("RSI_REPLY_CACHE", "off")
    texts = [model.generate(request()).completions[0].text for _ in range(2)]
    assert texts == ["reply 0", "reply 1"] and cache.summary() == []
    monkeypatch.delenv("RSI_REPLY_CACHE")
    assert model.generate(request()).cache == "miss" and model.generate(request()).cache == "hit"


def test_a_greedy_request_is_served_from_the_cache_the_second_time(cache: ReplyCache) -> None:
    inner = counting_model()
    model = CachedModel(inner, cache, identity(), origin="run-1")
    first = model.generate(request())
    again = CachedModel(counting_model(), cache, identity(), origin="run-2").generate(request())
    assert first.cache == "miss" and first.cached_from is None
    assert again.cache == "hit" and again.cached_from == "run-1"  # who first made it
    assert [c.text for c in again.completions] == [c.text for c in first.completions] == ["reply 0"]
    assert again.completion_tokens == first.completion_tokens  # the configuration's price is unchanged
    assert len(inner.requests) == 1
    assert model.stats.as_dict() == {"hits": 0, "misses": 1, "uncacheable": 0, "faults": 0, "tokens_not_spent": 0}


def test_a_sampled_request_misses_unless_its_backend_is_proven_per_seed(cache: ReplyCache) -> None:
    unproven = CachedModel(counting_model(), cache, identity(seeded_exact=False), origin="r")
    texts = {unproven.generate(request(temperature=0.9, seed=1)).completions[0].text for _ in range(3)}
    assert texts == {"reply 0", "reply 1", "reply 2"}  # asked every time, nothing kept
    assert unproven.stats.uncacheable == 3 and cache.summary() == []
    proven = CachedModel(counting_model(), cache, identity(), origin="r")
    texts = {proven.generate(request(temperature=0.9, seed=1)).completions[0].text for _ in range(3)}
    assert texts == {"reply 0"} and proven.stats.hits == 2


def test_a_reply_whose_weights_changed_is_never_served(cache: ReplyCache, tmp_path: Path) -> None:
    adapter = tmp_path / "alpha"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    (adapter / "adapter_model.safetensors").write_bytes(b"one")
    model = CachedModel(counting_model(), cache, identity(adapters={}), origin="r")
    model.load_adapter("alpha", str(adapter))
    first = model.generate(request(specialist="alpha"))
    assert model.generate(request(specialist="alpha")).cache == "hit"
    (adapter / "adapter_model.safetensors").write_bytes(b"two")  # a new revision under the same name
    model.load_adapter("alpha", str(adapter))
    changed = model.generate(request(specialist="alpha"))
    assert changed.cache == "miss" and changed.completions[0].text != first.completions[0].text
    model.unload_adapter("alpha")
    assert not model.identity.exact(request(specialist="alpha"))


def test_a_queued_hit_is_a_finished_future(cache: ReplyCache) -> None:
    from rsi.models.served import ServedFuture

    class Queued(ScriptedModel):
        def submit(self, req: GenerationRequest) -> ServedFuture:
            future = ServedFuture()
            future.set_running_or_notify_cancel()
            future.set_result(self.generate(req))
            return future

    inner = Queued(lambda req: "queued reply")
    model = CachedQueuedModel(inner, cache, identity(), origin="r")
    assert model.submit(request()).result().cache == "miss"
    hit = model.submit(request())
    assert hit.started.is_set() and hit.done() and hit.result().cache == "hit"
    assert len(inner.requests) == 1


def test_a_broken_cache_is_ours_and_the_model_answers(tmp_path: Path) -> None:
    cache = ReplyCache(f"sqlite:///{tmp_path / 'c.sqlite'}")
    model = CachedModel(counting_model(), cache, identity(), origin="r")
    cache.engine.dispose()
    (tmp_path / "c.sqlite").write_bytes(b"not a database" * 100)
    result = model.generate(request())
    assert result.completions[0].text == "reply 0" and model.stats.faults >= 1


_WRITER = """
import sys
from rsi.models.base import GenerationResult, Completion
from rsi.models.cache import ModelIdentity, ReplyCache
url, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
cache = ReplyCache(url)
ident = ModelIdentity("embedded", "smol", "b", "float32", "n", {}, True, True)
for i in range(count):
    key = f"shared-{i}" if i % 4 == 0 else f"{name}-{i}"  # a quarter of the keys both writers make
    cache.put(key, ident, GenerationResult(completions=[Completion(text=f"{key} by {name}")], completion_tokens=3), name)
    print(i, flush=True)
"""


def _writer(url: str, name: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _WRITER, url, name, str(count)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_two_writers_on_one_cache_lose_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs' / 'cache.sqlite'}"
    ReplyCache(url)  # the table exists before both start
    writers = [_writer(url, name, 200) for name in ("w1", "w2")]
    for writer in writers:
        writer.communicate(timeout=300)
        assert writer.returncode == 0
    cache = ReplyCache(url)
    assert cache.summary()[0].replies == 50 + 150 + 150  # shared keys once, each writer's own keys all
    for i in range(0, 200, 4):
        assert cache.get(f"shared-{i}") is not None
    assert all(cache.get(f"{name}-{i}") is not None for name in ("w1", "w2") for i in range(200) if i % 4)


def test_sigkill_while_writing_leaves_a_readable_cache(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "cache.sqlite"
    url = f"sqlite:///{path}"
    writer = _writer(url, "w", 100_000)
    assert writer.stdout is not None
    for _ in range(30):  # let it write a while, then kill it mid-stream
        writer.stdout.readline()
    time.sleep(0.2)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cache = ReplyCache(url)
    assert cache.summary()[0].replies >= 30
    assert cache.get("shared-0") is not None


def test_rsi_cache_lists_prunes_and_clears(workspace, cli) -> None:
    from datetime import timedelta

    cache = ReplyCache(f"sqlite:///{workspace.runs_dir / 'cache.sqlite'}")
    for model_name in ("smol", "other"):
        CachedModel(counting_model(), cache, identity(model=model_name), origin="r").generate(request(model_name))
    listed = cli("cache", "list", "--json", cwd=workspace.root)
    assert listed.returncode == 0, listed.stderr
    assert sorted(row["model"] for row in json.loads(listed.stdout)["models"]) == ["other", "smol"]
    assert cache.prune(older_than=timedelta(days=1)) == 0  # nothing is that old
    pruned = cli("cache", "prune", "--model", "other", cwd=workspace.root)
    assert pruned.returncode == 0 and "deleted 1" in pruned.stdout
    assert [row.model for row in cache.summary()] == ["smol"]
    bad = cli("cache", "prune", "--older-than", "soon", cwd=workspace.root)
    assert bad.returncode == 2 and "--older-than" in bad.stderr + bad.stdout and "Traceback" not in bad.stderr
    cleared = cli("cache", "clear", cwd=workspace.root)
    assert cleared.returncode == 0 and cache.summary() == []


@pytest.mark.slow
def test_the_real_float32_model_is_served_its_own_reply(base_folder: Path, tmp_path: Path) -> None:
    """The embedded model in float32, greedy and seeded: the cache's reply is the model's reply, token for token,
    and serving it runs no decoding step."""
    from rsi.models.embedded.backend import EmbeddedModel

    cache = ReplyCache(f"sqlite:///{tmp_path / 'cache.sqlite'}")
    inner = EmbeddedModel(base_folder, name="smol32", dtype="float32", max_batch=4)
    try:
        model = CachedQueuedModel(inner, cache, identity(adapters={}), origin="first")
        asks = [request("Write a python function that adds two numbers."),
                request("Name a colour.", temperature=0.9, seed=7, n=2)]
        made = [model.submit(r).result() for r in asks]
        steps = inner.stats.steps
        served = [model.submit(r).result() for r in asks]
        assert inner.stats.steps == steps  # nothing decoded
        fresh = [inner.generate(r) for r in asks]
    finally:
        inner.close()
    for a, b, c in zip(made, served, fresh, strict=True):
        assert b.cache == "hit" and b.cached_from == "first"
        assert [x.text for x in b.completions] == [x.text for x in a.completions] == [x.text for x in c.completions]
        assert (b.prompt_tokens, b.completion_tokens) == (c.prompt_tokens, c.completion_tokens)


def test_turning_the_cache_off_never_moves_the_model_folder() -> None:
    """`--no-cache` sets its own variable: RSI_CACHE names the folder of converted weights and tuning probes, and
    RSI_CACHE=off once put a fresh copy of the base (and its tuning) under ./off."""
    from rsi.models import cache
    from rsi.models.embedded.weights import ENV_CACHE as MODEL_FOLDER

    assert cache.ENV_CACHE != MODEL_FOLDER and cache.ENV_CACHE_DB != MODEL_FOLDER
