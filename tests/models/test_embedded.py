"""The embedded backend with the real SmolLM2 base and real peft adapters (slow: about a minute)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rsi.errors import UserInputError

pytestmark = pytest.mark.slow

CODE_PROMPT = "Write a python function that adds two numbers."


@pytest.fixture(scope="module")
def model(base_folder: Path):
    from rsi.models.embedded.backend import EmbeddedModel

    embedded = EmbeddedModel(base_folder, name="smol", max_batch=8)
    yield embedded
    embedded.close()


def test_greedy_is_deterministic_and_counts_tokens(model, ask_fn) -> None:
    first = model.generate(ask_fn("What is the capital of France?"))
    second = model.generate(ask_fn("What is the capital of France?"))
    assert first.completions[0].text == second.completions[0].text
    assert "Paris" in first.completions[0].text
    encoded = model.tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert first.prompt_tokens == len(model.tokenizer(encoded, add_special_tokens=False)["input_ids"])
    assert 0 < first.completion_tokens <= 12
    assert first.completion_tokens == first.completions[0].completion_tokens
    assert first.latency_s > 0


def test_stats_account_for_the_model_time_and_prompt_tokens(model, ask_fn) -> None:
    from rsi.models.embedded.backend import BatchStats

    before = BatchStats(**model.batch_stats())
    result = model.generate(ask_fn("Name three colours.", max_tokens=8))
    after = BatchStats(**model.batch_stats())
    assert after.prefill_tokens - before.prefill_tokens == result.prompt_tokens
    assert after.steps - before.steps == result.completion_tokens - 1  # the first token comes from the prefill
    assert after.step_ms > before.step_ms and after.prefill_ms >= before.prefill_ms
    assert after.serving_ms - before.serving_ms >= (after.step_ms - before.step_ms) + (after.prefill_ms - before.prefill_ms)
    assert model.use_summary().startswith("model 'smol': ")
    assert f"{after.steps} decoding steps" in model.use_summary()


def test_n_seeded_samples_repeat_and_differ(model, ask_fn) -> None:
    request = ask_fn("Tell me a story.", n=3, temperature=1.0, seed=7)
    first = model.generate(request)
    again = model.generate(request)
    texts = [c.text for c in first.completions]
    assert len(texts) == 3
    assert texts == [c.text for c in again.completions]  # seeded: same completions
    assert len(set(texts)) > 1  # but not three copies of one sample
    assert first.completion_tokens == sum(c.completion_tokens for c in first.completions)
    other_seed = model.generate(ask_fn("Tell me a story.", n=3, temperature=1.0, seed=8))
    assert [c.text for c in other_seed.completions] != texts


def test_stop_string_stops_generation_early(model, ask_fn) -> None:
    free = model.generate(ask_fn(CODE_PROMPT, max_tokens=48))
    stopped = model.generate(ask_fn(CODE_PROMPT, max_tokens=48, stop=["```\n"]))
    full, cut = free.completions[0], stopped.completions[0]
    assert full.finish_reason == "length" and full.completion_tokens == 48
    assert "```\n" in full.text  # the unstopped answer closes its code block inside 48 tokens
    assert cut.finish_reason == "stop"
    assert cut.text == full.text[: full.text.index("```\n")]  # the stop string itself is excluded
    assert cut.completion_tokens < full.completion_tokens - 10  # it really stopped early


def test_a_code_stop_ends_the_row_at_its_first_block_and_nothing_before_changes(model, ask_fn) -> None:
    from rsi.fences import first_block_end

    free = model.generate(ask_fn(CODE_PROMPT, max_tokens=96)).completions[0]
    stopped = model.generate(ask_fn(CODE_PROMPT, max_tokens=96, stop_after_code=True)).completions[0]
    end = first_block_end(free.text)
    assert end is not None and end < len(free.text) - 20  # the free answer closes its block and talks on
    assert stopped.text == free.text[:end]  # greedy: the same tokens, up to the closing fence
    assert stopped.finish_reason == "stop"
    assert stopped.completion_tokens < free.completion_tokens - 5  # the tail was never decoded


def test_rows_keep_their_own_max_tokens_in_one_batch(model, ask_fn) -> None:
    model.stats.largest_batch_rows = 0
    with model._lock:  # queue both first, so they are admitted into the same steps
        short = model.submit(ask_fn("Count from one to twenty.", max_tokens=3))
        long = model.submit(ask_fn("Count from one to twenty.", max_tokens=10))
    assert short.result().completion_tokens == 3
    assert long.result().completion_tokens == 10
    assert long.result().completions[0].text.startswith(short.result().completions[0].text)
    assert model.stats.largest_batch_rows == 2  # both rows shared decoding steps


@pytest.mark.parametrize("merge", [False, True], ids=["lora-layers", "merged-weights"])
def test_adapters_in_one_batch_match_one_at_a_time(base_folder: Path, adapter_dirs, ask_fn, merge: bool) -> None:
    from rsi.models.embedded.backend import EmbeddedModel

    # float32: in bf16, batch shape and padding shift logits enough to flip a near-tie of the random
    # adapters now and then; this test is about each row getting its own adapter, not about bf16.
    # merged-weights: a request alone runs on its adapter's merged weights, the mixed batch through peft's
    # LoRA layers; in float32 the two differ by rounding only, and give the same tokens here.
    model = EmbeddedModel(base_folder, name="smol32", dtype="float32", max_batch=8, merge_adapters=merge)
    model.load_adapter("alpha", str(adapter_dirs["alpha"]))
    model.load_adapter("beta.r2", str(adapter_dirs["beta"]))  # dots are fine in served names
    requests = [
        ask_fn("What is 2+2?", max_tokens=8),
        ask_fn("What is 2+2?", max_tokens=8, specialist="alpha"),
        ask_fn("What is 2+2?", max_tokens=8, specialist="beta.r2"),
        ask_fn("Name a colour.", max_tokens=8, specialist="alpha"),
    ]
    alone = [model.generate(r) for r in requests]
    assert model.stats.largest_batch_rows == 1
    futures = [model.submit(r) for r in requests]
    together = [f.result() for f in futures]
    # The LoRA layers stay switched between steps (not re-entered per step): back to a base-only step after an
    # adapter's, the base answers as the base again.
    base_again = model.generate(requests[0]).completions[0].text
    merging = model._merged is not None
    model.close()
    assert base_again == alone[0].completions[0].text
    assert model.stats.largest_batch_rows == 4  # all four rows ran in one mixed-adapter generate
    texts = [r.completions[0].text for r in together]
    assert texts == [r.completions[0].text for r in alone]
    assert len({texts[0], texts[1], texts[2]}) == 3  # base, alpha and beta each answered differently
    assert [r.specialist for r in together] == [None, "alpha", "beta.r2", "alpha"]
    assert merging is merge


def test_concurrent_threads_share_batches(model, ask_fn) -> None:
    results: list[str] = [""] * 6
    start = threading.Barrier(6)

    def call(i: int) -> None:
        start.wait()
        results[i] = model.generate(ask_fn(f"Say the number {i}.", max_tokens=6)).completions[0].text

    model.stats.largest_batch_rows = 0
    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(results)
    assert model.stats.largest_batch_rows > 1  # some of the six calls shared decoding steps


def test_replace_and_unload_adapters(model, adapter_dirs, ask_fn) -> None:
    from rsi.models.embedded.backend import UnknownAdapterError

    base = model.generate(ask_fn("What is 2+2?")).completions[0].text
    model.load_adapter("swap", str(adapter_dirs["alpha"]))
    as_alpha = model.generate(ask_fn("What is 2+2?", specialist="swap")).completions[0].text
    model.load_adapter("swap", str(adapter_dirs["beta"]))  # hand-off: same name, new weights
    as_beta = model.generate(ask_fn("What is 2+2?", specialist="swap")).completions[0].text
    assert as_alpha != as_beta != base
    for name in list(model.adapters()):  # the last step ran on beta: unloading must not leave it in the base
        model.unload_adapter(name)
    assert model.adapters() == {}
    with pytest.raises(UnknownAdapterError):
        model.generate(ask_fn("What is 2+2?", specialist="swap"))
    assert model.generate(ask_fn("What is 2+2?")).completions[0].text == base  # LoRA layers gone
    # bfloat16 (where measured faster) merges each adapter's weights for a step of its rows alone: the
    # replacement and the unloading above put the base's own weights back first.
    assert (model._merged is not None) is (model.dtype.value != "float32")
    with pytest.raises(UnknownAdapterError):
        model.unload_adapter("swap")


def test_bad_adapter_folder_is_user_error(model, tmp_path) -> None:
    with pytest.raises(UserInputError, match="adapter_config.json"):
        model.load_adapter("broken", str(tmp_path))


def test_an_overlong_prompt_fails_alone(model, ask_fn) -> None:
    too_long = model.submit(ask_fn("word " * (model.max_positions + 10), max_tokens=2))
    fine = model.submit(ask_fn("Say yes.", max_tokens=2))
    with pytest.raises(UserInputError, match="context"):
        too_long.result()
    assert fine.result().completion_tokens == 2


def test_a_cancelled_request_is_not_generated(model, ask_fn) -> None:
    served_before = model.stats.requests
    with model._lock:  # hold the worker so both requests are still queued when one is cancelled
        dropped = model.submit(ask_fn("Say no.", max_tokens=2))
        kept = model.submit(ask_fn("Say yes.", max_tokens=2))
        assert dropped.cancel()
    assert kept.result().completion_tokens == 2
    assert dropped.cancelled()
    assert model.stats.requests == served_before + 1


def test_batches_never_exceed_max_batch_rows(model, ask_fn) -> None:
    model.stats.largest_batch_rows = 0
    with model._lock:  # queue everything first, so the worker sees the whole burst at once
        futures = [
            model.submit(ask_fn(f"Pick a number, {i}.", n=n, max_tokens=2))
            for i, n in enumerate((5, 4, 3, 1))
        ]
    results = [f.result() for f in futures]
    assert [len(r.completions) for r in results] == [5, 4, 3, 1]
    assert model.stats.largest_batch_rows <= model.max_batch  # the 4-row request was carried over
    with pytest.raises(UserInputError, match="max_batch"):
        model.submit(ask_fn("x", n=model.max_batch + 1))


# -- continuous batching ---------------------------------------------------------------------------

STAGGERED = [  # prompts of different lengths, each with its own token budget
    ("Write a python function that adds two numbers.", 40),
    ("Hi", 12),
    ("Explain in two sentences how a hash table finds a key, and why collisions are handled.", 30),
    ("What is the capital of France?", 8),
    ("List three colours.", 20),
]


@pytest.fixture(scope="module")
def model32(base_folder: Path):
    from rsi.models.embedded.backend import EmbeddedModel

    embedded = EmbeddedModel(base_folder, name="smol32", dtype="float32", max_batch=8)
    yield embedded
    embedded.close()


def _wait_for_steps(model, steps: int, timeout_s: float = 120.0) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while model.stats.steps < steps:
        assert time.monotonic() < deadline, "the model made no progress"
        time.sleep(0.01)


def test_requests_joining_a_running_batch_match_one_at_a_time(model32, ask_fn) -> None:
    requests = [ask_fn(prompt, max_tokens=budget) for prompt, budget in STAGGERED]
    alone = [model32.generate(r) for r in requests]
    model32.stats.largest_batch_rows = 0
    futures = []
    for request in requests:  # each arrives while the earlier ones are mid-decoding
        steps = model32.stats.steps
        futures.append(model32.submit(request))
        _wait_for_steps(model32, steps + 3)
    together = [f.result() for f in futures]
    for lone, joined in zip(alone, together, strict=True):
        assert joined.completions[0].text == lone.completions[0].text
        assert joined.completion_tokens == lone.completion_tokens
        assert joined.prompt_tokens == lone.prompt_tokens
    assert model32.stats.largest_batch_rows >= 3  # they really decoded together
    assert len({len(r.completions[0].text) for r in alone}) == len(alone)  # five different answers
    prefills = model32.stats.prefills
    with model32._lock:  # all queued at once: one left-padded prefill for prompts of five lengths
        futures = [model32.submit(r) for r in requests]
    at_once = [f.result() for f in futures]
    assert model32.stats.prefills == prefills + 1
    assert [r.completions[0].text for r in at_once] == [r.completions[0].text for r in alone]


def test_a_late_short_request_leaves_before_an_early_long_one(model32, ask_fn) -> None:
    long = model32.submit(ask_fn("Write a long story about a lighthouse keeper.", max_tokens=120))
    _wait_for_steps(model32, model32.stats.steps + 5)
    short = model32.submit(ask_fn("Say yes.", max_tokens=3))
    assert short.result().completion_tokens <= 3
    assert not long.done()  # the short one joined mid-flight and left without waiting for the long one
    assert long.result().completion_tokens == 120


def test_sampled_and_adapter_rows_joining_late_match_alone(base_folder: Path, adapter_dirs, ask_fn) -> None:
    from rsi.models.embedded.backend import EmbeddedModel

    model = EmbeddedModel(base_folder, name="smol32a", dtype="float32", max_batch=8)
    try:
        model.load_adapter("alpha", str(adapter_dirs["alpha"]))
        requests = [
            ask_fn("Write a python function that adds two numbers.", max_tokens=30),
            ask_fn("What is 2+2?", max_tokens=10, specialist="alpha"),
            ask_fn("Tell me a story.", max_tokens=16, temperature=0.9, top_p=0.9, seed=5, n=2),
            ask_fn("Name a colour.", max_tokens=10, specialist="alpha", stop=["."]),
        ]
        alone = [model.generate(r) for r in requests]
        futures = []
        for request in requests:
            steps = model.stats.steps
            futures.append(model.submit(request))
            _wait_for_steps(model, steps + 2)
        together = [f.result() for f in futures]
    finally:
        model.close()
    for lone, joined in zip(alone, together, strict=True):
        assert [c.text for c in joined.completions] == [c.text for c in lone.completions]
        assert [c.finish_reason for c in joined.completions] == [c.finish_reason for c in lone.completions]
    assert together[1].specialist == "alpha"


def test_an_abandoned_request_leaves_the_batch(model32, ask_fn) -> None:
    future = model32.submit(ask_fn("Write a long story about a dragon.", max_tokens=200))
    _wait_for_steps(model32, model32.stats.steps + 3)
    future.abandon()
    with pytest.raises(Exception, match="abandoned"):
        future.result(timeout=60)
    assert len(model32._batch) == 0


def test_model_s_counts_from_serving_not_from_queueing(model32, ask_fn) -> None:
    import threading as th
    import time

    from rsi.models.served import DeadlineReached, wait_served

    outcome: dict = {}

    def call() -> None:
        outcome["result"] = wait_served(model32, ask_fn("Say yes.", max_tokens=2), 5.0, time.monotonic() + 300)

    with model32._lock:  # the worker cannot admit: the request waits in the queue longer than model_s
        caller = th.Thread(target=call)
        caller.start()
        time.sleep(7.0)  # longer than model_s: had the clock started at submit, this call would fail
    caller.join(120)
    assert outcome["result"].completion_tokens == 2
    with model32._lock, pytest.raises(DeadlineReached, match="waited"):
        wait_served(model32, ask_fn("Say no.", max_tokens=2), 60.0, time.monotonic() + 0.5)


def test_model_s_bounds_a_stalled_serving_and_frees_the_row(model32, ask_fn) -> None:
    """model_s bounds the time a served request gains no token (a stalled model), and its row leaves the
    batch once the model moves again. The stall: this test holds the worker's lock mid-generation."""
    import threading as th
    import time

    from rsi.errors import ModelError
    from rsi.models.served import wait_served

    outcome: dict = {}

    def call() -> None:
        try:
            outcome["result"] = wait_served(model32, ask_fn("Write a long poem.", max_tokens=400), 1.0,
                                            time.monotonic() + 300)
        except ModelError as error:
            outcome["error"] = error

    caller = th.Thread(target=call)
    caller.start()
    deadline = time.monotonic() + 60
    while not len(model32._batch) and time.monotonic() < deadline:  # admitted and generating
        time.sleep(0.01)
    with model32._lock:  # the worker cannot take another step: no token for longer than model_s
        caller.join(30)
    assert "made no progress for model_s=1s" in str(outcome.get("error")), outcome
    deadline = time.monotonic() + 60
    while len(model32._batch) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(model32._batch) == 0  # the abandoned row left at the next step
