"""A sampled row's token choice: the nucleus it draws from and the frequencies it draws with."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from rsi.models.embedded.rows import NUCLEUS_CANDIDATES, nucleus, pick_token  # noqa: E402


def sorted_nucleus(probs, top_p: float) -> set[int]:
    """The definition, by a full sort: keep a token while the mass before it is below top_p."""
    ordered, order = torch.sort(probs, descending=True)
    kept, before = set(), 0.0
    for p, token in zip(ordered.tolist(), order.tolist(), strict=True):
        if before >= top_p:
            break
        kept.add(token)
        before += p
    return kept


@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0, 12.0])  # from flat (nucleus past the candidates) to peaked
@pytest.mark.parametrize("top_p", [0.1, 0.5, 0.9, 0.95, 0.999])
def test_the_nucleus_is_what_a_full_sort_keeps(scale: float, top_p: float) -> None:
    generator = torch.Generator().manual_seed(int(scale * 100 + top_p * 1000))
    probs = torch.softmax(torch.randn(5000, generator=generator, dtype=torch.float64) * scale, dim=-1)
    weights, ids = nucleus(probs, top_p)
    assert set(ids.tolist()) == sorted_nucleus(probs, top_p)
    assert torch.equal(weights, probs[ids])


def test_a_flat_distribution_takes_the_full_sort_and_a_peaked_one_does_not() -> None:
    flat = torch.full((1000,), 1e-3, dtype=torch.float64)
    assert len(nucleus(flat, 0.5)[1]) > NUCLEUS_CANDIDATES
    peaked = torch.softmax(torch.arange(1000, dtype=torch.float64), dim=-1)
    assert len(nucleus(peaked, 0.9)[1]) < NUCLEUS_CANDIDATES


@pytest.mark.parametrize("top_p", [0.8, 1.0])
def test_draws_follow_the_renormalised_nucleus(top_p: float) -> None:
    probs = torch.tensor([0.40, 0.25, 0.15, 0.10, 0.06, 0.04], dtype=torch.float64)
    logits = torch.log(probs)
    allowed = sorted_nucleus(probs, top_p)
    target = {t: float(probs[t]) / sum(float(probs[a]) for a in allowed) for t in allowed}
    generator = torch.Generator().manual_seed(7)
    draws = 20_000
    counts: dict[int, int] = {}
    for _ in range(draws):
        token = pick_token(logits, 1.0, top_p, generator)
        counts[token] = counts.get(token, 0) + 1
    assert set(counts) == allowed  # nothing outside the nucleus, and every token in it is reached
    for token, share in target.items():  # 20k draws: a standard error under 0.004
        assert counts[token] / draws == pytest.approx(share, abs=0.015)


def test_greedy_takes_the_argmax_and_a_seeded_stream_repeats() -> None:
    logits = torch.randn(300, generator=torch.Generator().manual_seed(1))
    assert pick_token(logits, 0.0, 0.9, None) == int(torch.argmax(logits))
    first = [pick_token(logits, 0.8, 0.95, g) for g in [torch.Generator().manual_seed(3)] for _ in range(50)]
    again = [pick_token(logits, 0.8, 0.95, g) for g in [torch.Generator().manual_seed(3)] for _ in range(50)]
    assert first == again and len(set(first)) > 1
