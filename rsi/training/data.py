"""Load an exported SFT dataset and turn each conversation into tokens with assistant-only labels.

The input is what `rsi trajectories export` writes (rsi/trajectories/export.py): `train.jsonl`
(one `{"messages": [...]}` per line) and `manifest.json` (provenance; its `dataset.sha256` is the
digest of the JSONL bytes). Loading checks the digest, so a dataset edited after export is refused
instead of silently training on something the manifest does not describe.

Masking. The loss is computed on assistant tokens only: the system prompt, the task and the REPL
observations are context the model is shown, not behaviour to imitate. Labels are found by rendering
the chat template on growing prefixes of the conversation: the tokens between the rendering of
`messages[:i]` with the generation prompt and the rendering of `messages[:i+1]` are exactly the
tokens of assistant message i (its text and its end-of-turn marker). This relies on the template
being prefix-stable (true for ChatML templates such as SmolLM2's and Qwen's); a template that is not
is detected and refused rather than producing misaligned labels.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi.errors import Problem, TrainingError, UserInputError, ValidationError

DATASET_FILE = "train.jsonl"
MANIFEST_FILE = "manifest.json"
IGNORE_INDEX = -100  # the label torch's cross-entropy skips
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class SftDataset:
    """An exported dataset, verified against its manifest."""

    folder: Path
    conversations: list[list[dict[str, str]]]
    manifest: dict[str, Any]
    sha256: str

    @property
    def source_runs(self) -> list[str]:
        return list(self.manifest.get("source", {}).get("runs", []))


@dataclass(frozen=True)
class TokenizedExample:
    """One conversation as model input: ids, and labels that are IGNORE_INDEX outside assistant turns."""

    input_ids: list[int]
    labels: list[int]
    truncated: bool = False

    @property
    def trained_tokens(self) -> int:
        return sum(1 for label in self.labels if label != IGNORE_INDEX)


@dataclass(frozen=True)
class TokenizedDataset:
    examples: list[TokenizedExample]
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return sum(len(e.input_ids) for e in self.examples)


def load_sft_dataset(folder: Path) -> SftDataset:
    """Read and check `folder/train.jsonl` against `folder/manifest.json` (every problem named by line)."""
    folder = Path(folder)
    if folder.is_file() and folder.name == MANIFEST_FILE:
        folder = folder.parent
    manifest_path, data_path = folder / MANIFEST_FILE, folder / DATASET_FILE
    if not manifest_path.is_file():
        raise UserInputError(
            f"{folder}: no {MANIFEST_FILE} (not an exported dataset)",
            hint="export one with `rsi trajectories export RUN --out DIR`",
        )
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ValidationError([Problem(manifest_path, None, "", f"invalid JSON: {error}")]) from error
    name = manifest.get("dataset", {}).get("file", DATASET_FILE)
    data_path = folder / name
    if not data_path.is_file():
        raise ValidationError([Problem(manifest_path, None, "dataset.file", f"{data_path.name} does not exist")])
    raw = data_path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    expected = manifest.get("dataset", {}).get("sha256", "")
    if expected != digest:
        raise ValidationError(
            [Problem(manifest_path, None, "dataset.sha256", f"{data_path.name} has sha256 {digest[:16]}..., "
                     f"the manifest says {str(expected)[:16]}...")],
            hint="the dataset changed after export; export it again",
        )
    problems: list[Problem] = []
    conversations: list[list[dict[str, str]]] = []
    for number, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            problems.append(Problem(data_path, number, "", f"invalid JSON: {error}"))
            continue
        messages = record.get("messages") if isinstance(record, dict) else None
        if not isinstance(messages, list) or not messages:
            problems.append(Problem(data_path, number, "messages", "must be a non-empty list"))
            continue
        bad = [
            i for i, m in enumerate(messages)
            if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(m.get("content"), str)
        ]
        if bad:
            problems.append(Problem(data_path, number, f"messages[{bad[0]}]",
                                    f"needs role in {ROLES} and string content"))
            continue
        if not any(m["role"] == "assistant" for m in messages):
            problems.append(Problem(data_path, number, "messages", "has no assistant turn to learn from"))
            continue
        conversations.append([{"role": m["role"], "content": m["content"]} for m in messages])
    if problems:
        raise ValidationError(problems)
    if not conversations:
        raise UserInputError(f"{data_path}: no examples")
    return SftDataset(folder=folder, conversations=conversations, manifest=manifest, sha256=digest)


def _ids(encoded: Any) -> list[int]:
    # transformers 5 returns a BatchEncoding from apply_chat_template(tokenize=True); 4.x a list
    if hasattr(encoded, "keys"):
        encoded = encoded["input_ids"]
    return [int(i) for i in encoded]


def tokenize_conversation(tokenizer: Any, messages: list[dict[str, str]], max_length: int) -> TokenizedExample:
    """Token ids and assistant-only labels for one conversation, truncated to `max_length` tokens."""
    full = _ids(tokenizer.apply_chat_template(messages, tokenize=True))
    labels = [IGNORE_INDEX] * len(full)
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        start_ids = _ids(tokenizer.apply_chat_template(messages[:index], tokenize=True, add_generation_prompt=True))
        end_ids = _ids(tokenizer.apply_chat_template(messages[: index + 1], tokenize=True))
        if full[: len(start_ids)] != start_ids or full[: len(end_ids)] != end_ids:
            raise TrainingError(
                "the tokenizer's chat template is not prefix-stable; assistant tokens cannot be located",
                hint="use a ChatML-style template (SmolLM2, Qwen) or train with a template that renders prefixes",
            )
        for position in range(len(start_ids), len(end_ids)):
            labels[position] = full[position]
    truncated = len(full) > max_length
    return TokenizedExample(full[:max_length], labels[:max_length], truncated)


def tokenize_dataset(tokenizer: Any, dataset: SftDataset, max_length: int) -> TokenizedDataset:
    """Every conversation tokenized; examples left with no assistant token after truncation are dropped."""
    examples: list[TokenizedExample] = []
    dropped: dict[str, int] = {}
    for messages in dataset.conversations:
        example = tokenize_conversation(tokenizer, messages, max_length)
        if example.trained_tokens == 0:
            dropped["no assistant token within max_length"] = dropped.get("no assistant token within max_length", 0) + 1
            continue
        examples.append(example)
    if not examples:
        raise TrainingError(
            f"no example keeps an assistant token within max_length={max_length}",
            hint="raise [training] max_length",
        )
    return TokenizedDataset(examples, dropped)


def collate(examples: list[TokenizedExample], pad_id: int) -> dict[str, Any]:
    """Right-padded tensors for one batch (labels padded with IGNORE_INDEX, attention mask 0 on padding)."""
    import torch

    width = max(len(e.input_ids) for e in examples)
    ids = [e.input_ids + [pad_id] * (width - len(e.input_ids)) for e in examples]
    labels = [e.labels + [IGNORE_INDEX] * (width - len(e.labels)) for e in examples]
    mask = [[1] * len(e.input_ids) + [0] * (width - len(e.input_ids)) for e in examples]
    return {
        "input_ids": torch.tensor(ids, dtype=torch.long),
        "labels": torch.tensor(labels, dtype=torch.long),
        "attention_mask": torch.tensor(mask, dtype=torch.long),
    }
