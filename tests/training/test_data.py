"""Dataset loading (checked against the manifest, problems located) and assistant-only loss masking with the
real SmolLM2 tokenizer and chat template."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from rsi.errors import TrainingError, UserInputError, ValidationError
from rsi.training.data import IGNORE_INDEX, load_sft_dataset, tokenize_conversation, tokenize_dataset
from rsi.training.train import plan_batches

CONVERSATION = [
    {"role": "system", "content": "You solve tasks in a Python REPL."},
    {"role": "user", "content": "Write add(a, b) in solution.py"},
    {"role": "assistant", "content": "```python\nprint('looking')\n```"},
    {"role": "user", "content": "Output: looking"},
    {"role": "assistant", "content": "```python\nopen('solution.py','w').write('def add(a, b):\\n    return a + b\\n')\nsubmit()\n```"},
]


def write_dataset(folder: Path, conversations: list, manifest_sha: str | None = None, raw_lines: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = raw_lines if raw_lines is not None else [json.dumps({"messages": c}) for c in conversations]
    data = ("\n".join(lines) + "\n").encode()
    (folder / "train.jsonl").write_bytes(data)
    sha = manifest_sha or hashlib.sha256(data).hexdigest()
    (folder / "manifest.json").write_text(json.dumps({
        "schema": "rsi-sft-export/1", "dataset": {"file": "train.jsonl", "sha256": sha, "examples": len(lines)},
        "source": {"runs": ["run-a", "run-b"]},
    }))
    return folder


@pytest.fixture(scope="module")
def tokenizer(base_folder):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(base_folder)


def test_load_checks_digest_and_reads_provenance(tmp_path) -> None:
    folder = write_dataset(tmp_path / "ok", [CONVERSATION, CONVERSATION[:3]])
    dataset = load_sft_dataset(folder)
    assert len(dataset.conversations) == 2 and dataset.source_runs == ["run-a", "run-b"]
    assert dataset.sha256 == hashlib.sha256((folder / "train.jsonl").read_bytes()).hexdigest()
    assert load_sft_dataset(folder / "manifest.json").sha256 == dataset.sha256  # the manifest path works too

    tampered = write_dataset(tmp_path / "tampered", [CONVERSATION], manifest_sha="0" * 64)
    with pytest.raises(ValidationError) as caught:
        load_sft_dataset(tampered)
    assert "dataset.sha256" in str(caught.value) and "export it again" in (caught.value.hint or "")

    with pytest.raises(UserInputError, match="no manifest.json"):
        load_sft_dataset(tmp_path / "missing")


def test_bad_lines_are_reported_with_their_line_numbers(tmp_path) -> None:
    lines = [json.dumps({"messages": CONVERSATION}), "{not json", json.dumps({"messages": [{"role": "user", "content": "hi"}]}),
             json.dumps({"messages": [{"role": "robot", "content": "x"}]})]
    folder = write_dataset(tmp_path / "bad", [], raw_lines=lines)
    with pytest.raises(ValidationError) as caught:
        load_sft_dataset(folder)
    problems = caught.value.problems
    assert [(p.line, p.key) for p in problems] == [(2, ""), (3, "messages"), (4, "messages[0]")]
    assert "no assistant turn" in problems[1].message


def test_labels_cover_exactly_the_assistant_turns(tokenizer) -> None:
    example = tokenize_conversation(tokenizer, CONVERSATION, max_length=1024)
    assert len(example.input_ids) == len(example.labels)
    trained = [t for t, label in zip(example.input_ids, example.labels, strict=True) if label != IGNORE_INDEX]
    assert all(label in (IGNORE_INDEX, token) for token, label in zip(example.input_ids, example.labels, strict=True))
    text = tokenizer.decode(trained)
    # both assistant replies (with their end-of-turn markers) and nothing else
    assert "print('looking')" in text and "submit()" in text
    assert text.count("<|im_end|>") == 2
    for context in ("You solve tasks", "Write add(a, b)", "Output: looking", "<|im_start|>"):
        assert context not in text
    # contiguous spans: one per assistant turn
    spans, inside = 0, False
    for label in example.labels:
        if label != IGNORE_INDEX and not inside:
            spans += 1
        inside = label != IGNORE_INDEX
    assert spans == 2


def test_truncation_and_examples_without_assistant_tokens(tokenizer, tmp_path) -> None:
    short = tokenize_conversation(tokenizer, CONVERSATION, max_length=40)
    assert short.truncated and len(short.input_ids) == 40
    long_prompt = [{"role": "user", "content": "word " * 200}, {"role": "assistant", "content": "ok"}]
    dataset = load_sft_dataset(write_dataset(tmp_path / "d", [CONVERSATION, long_prompt]))
    tokenized = tokenize_dataset(tokenizer, dataset, max_length=100)
    assert len(tokenized.examples) == 1 and tokenized.dropped == {"no assistant token within max_length": 1}
    only_long = load_sft_dataset(write_dataset(tmp_path / "e", [long_prompt]))
    with pytest.raises(TrainingError, match="max_length"):
        tokenize_dataset(tokenizer, only_long, max_length=100)


def test_batch_plan_is_seeded_and_capped() -> None:
    plan = plan_batches(5, 2, 2, seed=3, max_steps=None)
    assert len(plan) == 6 and sorted(i for b in plan[:3] for i in b) == [0, 1, 2, 3, 4]
    assert plan == plan_batches(5, 2, 2, seed=3, max_steps=None)
    assert plan != plan_batches(5, 2, 2, seed=4, max_steps=None)
    assert plan_batches(5, 2, 2, seed=3, max_steps=4) == plan[:4]
