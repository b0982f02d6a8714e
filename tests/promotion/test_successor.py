"""`rsi propose` from real stored runs: the written successor portfolio validates, keeps what the
evidence justifies, drops the dominated, and every new variant names its parents."""

from __future__ import annotations

import tomllib

import pytest

from rsi.models.scripted import ScriptedModel
from rsi.portfolio import resolve_portfolio
from rsi.promotion.successor import propose_portfolio


@pytest.fixture
def run(builder, planned):
    train = builder.train_ids()
    greedy = builder.parent_config()
    hot = builder.config("repl-hot", **{"harness.sampling.temperature": 0.7, "harness.sampling.top_p": 0.95})
    text = builder.config("text-greedy", **{"harness.substrate": "text", "harness.system_prompt_file": "prompts/text.md",
                                            "harness.max_turns": 1})
    weak = builder.config("repl-short", **{"harness.max_turns": 2})
    plan = [planned(greedy, t, verdict="passed" if i < 6 else "failed") for i, t in enumerate(train[:10])]
    plan += [planned(hot, t, verdict="passed" if i in (0, 11) else "failed") for i, t in enumerate(train[:12])]
    plan += [planned(text, t, verdict="passed" if i == 15 else "failed") for i, t in enumerate(train[10:16], start=10)]
    plan += [planned(weak, t, verdict="passed" if i < 3 else "failed") for i, t in enumerate(train[:10])]
    return builder.run(plan), {"greedy": greedy, "hot": hot, "text": text, "weak": weak}


def test_successor_portfolio_keeps_justified_drops_dominated(builder, run) -> None:
    run_id, configs = run
    ws = builder.workspace
    out = ws.portfolios_dir / "gen2.toml"
    outcome = propose_portfolio(ws, [run_id], out, max_new=5)
    kept = {v.name: v for v in outcome.proposal.kept}
    dropped = {d.name: d for d in outcome.proposal.dropped}
    assert set(kept) == {"repl-greedy", "repl-hot", "text-greedy"}
    assert set(dropped) == {"repl-short"} and "dominated by repl-greedy" in dropped["repl-short"].reason
    assert "best overall" in kept["repl-greedy"].reason
    assert "marginal coverage" in kept["repl-hot"].reason and "marginal coverage" in kept["text-greedy"].reason
    assert len(outcome.proposal.new) == 5
    # the file on disk is a valid portfolio; every new variant names kept parents; lineage is kept
    resolved = resolve_portfolio(ws, out)
    assert [c.name for c in resolved.configurations] == [v.name for v in outcome.proposal.variants]
    by_name = {c.name: c for c in resolved.configurations}
    for variant in outcome.proposal.new:
        assert variant.parents and set(variant.parents) <= set(kept)
        assert by_name[variant.name].parents == list(variant.parents)
    assert by_name["repl-hot"].parents == ["default"]  # a kept variant keeps its own lineage
    for name, config in (("repl-greedy", configs["greedy"]), ("repl-hot", configs["hot"]),
                         ("text-greedy", configs["text"])):
        assert by_name[name].config_hash == config.config_hash  # kept means the same configuration
    data = tomllib.loads(out.read_text())
    assert data["portfolio"]["name"] == "gen2"
    text = out.read_text()
    assert run_id in text and "dropped repl-short" in text
    assert all(v["description"].startswith("[") for v in data["variants"])


def test_successor_of_the_successor_extends_lineage(builder, run, planned) -> None:
    run_id, configs = run
    ws = builder.workspace
    first = propose_portfolio(ws, [run_id], ws.portfolios_dir / "gen2.toml", max_new=3)
    child = next(c for c in first.configurations if c.name not in {"repl-greedy", "repl-hot", "text-greedy"})
    train = builder.train_ids()
    plan = [planned(child, t) for t in train[:5]] + [planned(configs["greedy"], t, verdict="failed") for t in train[:5]]
    second_run = builder.run(plan)
    second = propose_portfolio(ws, [second_run], ws.portfolios_dir / "gen3.toml", max_new=2)
    kept = {v.name: v for v in second.proposal.kept}
    assert child.name in kept and kept[child.name].parents == tuple(child.parents)
    grandchildren = [v for v in second.proposal.new if child.name in v.parents]
    assert grandchildren, "new variants descend from the new winner"
    # lineage reaches back: grandchild -> child -> a first-generation winner -> default
    assert set(child.parents) <= {"repl-greedy", "repl-hot", "text-greedy"}


def test_reflective_proposer_through_the_model_interface(builder, run) -> None:
    run_id, configs = run
    ws = builder.workspace
    revised = ("You are a careful Python programmer. Write solution.py with the exact function name the task "
               "asks for, test it on the examples, then call submit().")
    model = ScriptedModel([f"<prompt>\n{revised}\n</prompt>"], name="scripted-reflector")
    outcome = propose_portfolio(ws, [run_id], ws.portfolios_dir / "gen2r.toml", max_new=2, reflect_model=model)
    reflected = [v for v in outcome.proposal.new if v.operator == "reflect"]
    assert len(reflected) == 1 and reflected[0].parents == ("repl-greedy",)
    request = model.requests[0]
    shown = request.messages[1].content
    assert "Failed attempts:" in shown and "pyfuncs/" in shown
    heldout_keys = {builder.tasks[t].key for t in builder.heldout_ids()}
    assert not any(key in shown for key in heldout_keys)
    config = next(c for c in outcome.configurations if c.name == reflected[0].name)
    assert config.system_prompt.strip() == revised


def test_propose_refuses_bad_name_and_unknown_run(builder, run) -> None:
    from rsi.errors import UserInputError

    ws = builder.workspace
    with pytest.raises(UserInputError, match="must match"):
        propose_portfolio(ws, [run[0]], ws.portfolios_dir / "Bad Name.toml")
    with pytest.raises(UserInputError, match="no run nope"):
        propose_portfolio(ws, ["nope"], ws.portfolios_dir / "x.toml")
