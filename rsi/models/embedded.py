"""The embedded backend: one frozen base model and its LoRA specialists, in process, on the CPU.

Many threads call `generate()` at once (the harness runs several attempts; `rsi serve` answers many
HTTP requests). Each call becomes a `_Pending` in a queue; one worker thread drains up to `max_batch`
completion rows, left-pads them into one tensor and runs a single `model.generate` for all of them,
then resolves each caller's future. Batching is where the CPU speed comes from (about 22 tok/s for
one row against about 150 tok/s for eight on two cores), so everything that could split a batch is
done per row instead:

- **specialists**: peft's mixed-adapter batches (`adapter_names=[...]`, `"__base__"` for the bare
  base) serve rows for different adapters, and the base, in the same forward pass;
- **sampling**: `_RowSampler` draws each row's token from its own seeded `torch.Generator` with its
  own temperature and top_p (greedy rows keep the argmax), so a seeded request gets the same
  completion whatever else shares its batch;
- **stop strings and max_tokens**: `_RowStopper` ends each row on its own stop strings, its own
  `max_tokens` or EOS, so generation stops early (the harness stops at the end of a code block).

Stop strings are excluded from the returned text, as in the OpenAI API and vLLM.

Attention is SDPA: for 8 rows of 1,500 prompt tokens its prefill took half the time and less memory
than 'eager' (measured on 2 cores). In bf16 a row batched with others is not bit-identical to the
same row alone (padding and batch shape change the kernels' rounding), so a near-tie can flip a
greedy token (measured: a padded "capital of France?" row began "L'" where alone it began "The").
Use `dtype="float32"` where batched and lone outputs must agree exactly.
"""

from __future__ import annotations

import itertools
import os
import queue
import random
import threading
import time
import warnings
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rsi.errors import ModelError, UserInputError
from rsi.models.base import Completion, GenerationRequest, GenerationResult

ENV_THREADS = "RSI_TORCH_THREADS"
BASE_ROW = "__base__"  # peft's name for "no adapter" in a mixed-adapter batch


class UnknownAdapterError(ModelError):
    """A request named a specialist that is not loaded."""


@dataclass
class _Pending:
    request: GenerationRequest
    future: Future[GenerationResult]
    submitted: float = field(default_factory=time.monotonic)


@dataclass
class BatchStats:
    """Counters for benchmarks and tests: how much batching actually happened."""

    batches: int = 0
    rows: int = 0
    requests: int = 0
    completion_tokens: int = 0
    largest_batch_rows: int = 0


_STOP = object()


class EmbeddedModel:
    """A transformers + peft model behind the `ChatModel` interface, batching concurrent calls.

    `folder` is an HF-format model folder (see `rsi.models.weights.hf_folder`). `gather_s` is how long
    the worker waits after the first queued request for others to join its batch: a few
    milliseconds cost nothing against a generate that takes seconds, and they let concurrent callers
    that arrive together share one batch.
    """

    def __init__(
        self,
        folder: Path,
        *,
        name: str = "base",
        dtype: str = "bfloat16",
        max_batch: int = 8,
        gather_s: float = 0.02,
        device: str | None = None,
    ) -> None:
        self.name = name
        self.folder = Path(folder)
        self.max_batch = max_batch
        self.gather_s = gather_s
        self.stats = BatchStats()
        self._adapters: dict[str, str] = {}  # public name -> peft adapter name (peft names can't hold '.')
        self._adapter_paths: dict[str, str] = {}
        self._counter = itertools.count(1)
        self._lock = threading.RLock()  # guards the model: generate vs adapter load/unload
        self._queue: queue.Queue[Any] = queue.Queue()
        self._closed = False
        self.device = _pick_device(device)
        self._load(dtype)
        self._worker = threading.Thread(target=self._serve_forever, name=f"rsi-embedded-{name}", daemon=True)
        self._worker.start()

    # -- loading ---------------------------------------------------------------------------------

    def _load(self, dtype: str) -> None:
        import torch

        threads = os.environ.get(ENV_THREADS)
        if threads:
            # Process-wide. On a shared, oversubscribed machine OpenMP's spinning threads collapse
            # (measured at load 13 on 2 cores: 0.7 tok/s with 2 threads, 6 tok/s with 1).
            torch.set_num_threads(max(1, int(threads)))
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from rsi.models.weights import offline_hub, quiet_transformers

        quiet_transformers()
        try:
            with offline_hub():
                self.tokenizer = AutoTokenizer.from_pretrained(self.folder)
                model = AutoModelForCausalLM.from_pretrained(
                    self.folder, dtype=getattr(torch, dtype), attn_implementation="sdpa"
                )
        except Exception as error:
            raise ModelError(f"loading the base model from {self.folder} failed: {error}") from error
        model.to(self.device)  # type: ignore[arg-type]  # transformers wraps .to with a narrow type
        model.eval()
        self._base: Any = model
        self._model: Any = model
        self.max_positions = int(getattr(model.config, "max_position_embeddings", 2048))
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else self.tokenizer.eos_token_id)
        eos = model.generation_config.eos_token_id
        eos = eos if eos is not None else self.tokenizer.eos_token_id
        self.eos_ids = {int(e) for e in (eos if isinstance(eos, list) else [eos])}

    def load_adapter(self, name: str, path: str) -> None:
        """Serve the PEFT adapter folder `path` under `name`; an existing `name` is replaced atomically.

        Raises `UserInputError` if `path` is not a PEFT adapter folder, `ModelError` if peft refuses
        it (e.g. it was trained on another base).
        """
        from peft import PeftModel

        folder = Path(path)
        if not (folder / "adapter_config.json").is_file():
            raise UserInputError(f"{folder}: not a PEFT adapter folder (no adapter_config.json)")
        internal = f"rsi_adapter_{next(self._counter)}"
        with self._lock, warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # peft calls transformers' deprecated helpers
            try:
                if isinstance(self._model, PeftModel):
                    self._model.load_adapter(str(folder), adapter_name=internal, is_trainable=False)
                else:
                    self._model = PeftModel.from_pretrained(
                        self._base, str(folder), adapter_name=internal, is_trainable=False
                    )
                    self._model.eval()
            except Exception as error:
                raise ModelError(f"loading adapter {name!r} from {folder} failed: {error}") from error
            old = self._adapters.get(name)
            self._adapters[name] = internal
            self._adapter_paths[name] = str(folder)
            if old is not None:
                warnings.simplefilter("ignore")
                self._model.delete_adapter(old)

    def unload_adapter(self, name: str) -> None:
        """Stop serving `name`. Raises `UnknownAdapterError` if it is not loaded."""
        with self._lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # peft warns when the active adapter is deleted: expected here
            internal = self._adapters.pop(name, None)
            if internal is None:
                raise UnknownAdapterError(f"adapter {name!r} is not loaded")
            self._adapter_paths.pop(name, None)
            if self._adapters:
                self._model.delete_adapter(internal)
            else:  # the last one: strip the LoRA layers so the bare base runs at full speed again
                self._model = self._model.unload()
                self._base = self._model

    def adapters(self) -> dict[str, str]:
        """Loaded adapters: name -> folder."""
        with self._lock:
            return dict(self._adapter_paths)

    # -- serving ---------------------------------------------------------------------------------

    def submit(self, request: GenerationRequest) -> Future[GenerationResult]:
        """Queue `request`; the future resolves when its batch has run."""
        if self._closed:
            raise ModelError(f"model {self.name!r} is closed")
        if request.specialist is not None and request.specialist not in self._adapters:
            raise UnknownAdapterError(
                f"specialist {request.specialist!r} is not loaded",
                hint=f"loaded: {', '.join(sorted(self._adapters)) or 'none'}",
            )
        if request.n > self.max_batch:
            raise UserInputError(f"n={request.n} exceeds this model's max_batch={self.max_batch}")
        pending = _Pending(request, Future())
        self._queue.put(pending)
        return pending.future

    def generate(self, request: GenerationRequest) -> GenerationResult:
        return self.submit(request).result()

    def close(self) -> None:
        """Cancel queued work, let the running batch finish, stop the worker, drop the model.

        Queued requests at close time are abandoned ones (a caller that timed out, or a run that
        ended): generating them would only delay exit, and a process that exits while torch is
        mid-generate in the worker thread aborts ("terminate called without an active exception").
        """
        if self._closed:
            return
        self._closed = True
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not _STOP:
                item.future.cancel()
        self._queue.put(_STOP)
        self._worker.join(timeout=600)
        if not self._worker.is_alive():  # free the weights now, not when the last reference goes
            self._model = self._base = None

    def _serve_forever(self) -> None:
        carry: _Pending | None = None
        while True:
            first = carry if carry is not None else self._queue.get()
            carry = None
            if first is _STOP:
                return
            batch = [first]
            rows = first.request.n
            deadline = time.monotonic() + self.gather_s
            stopping = False
            while rows < self.max_batch:
                try:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if item is _STOP:
                    stopping = True
                    break
                if rows + item.request.n > self.max_batch:
                    carry = item
                    break
                batch.append(item)
                rows += item.request.n
            self._run_batch(batch)
            if stopping:
                self._queue.put(_STOP)

    def _run_batch(self, batch: list[_Pending]) -> None:
        try:
            with self._lock:
                # A caller that cancelled its future before its batch started costs nothing.
                batch = [p for p in batch if p.future.set_running_or_notify_cancel()]
                if not batch:
                    return
                results = self._generate_batch([p.request for p in batch])
        except Exception as error:
            failure = error if isinstance(error, ModelError) else ModelError(f"generation failed: {error}")
            for pending in batch:
                pending.future.set_exception(failure)
            return
        now = time.monotonic()
        for pending, result in zip(batch, results, strict=True):
            if isinstance(result, Exception):
                pending.future.set_exception(result)
            else:
                pending.future.set_result(result.model_copy(update={"latency_s": now - pending.submitted}))

    def _generate_batch(self, requests: list[GenerationRequest]) -> list[GenerationResult | Exception]:
        import torch
        from peft import PeftModel

        outcome: list[GenerationResult | Exception | None] = [None] * len(requests)
        encoded: dict[int, list[int]] = {}  # request index -> prompt token ids
        rows: list[tuple[int, int]] = []  # (request index, completion index)
        for index, request in enumerate(requests):
            if request.specialist is not None and request.specialist not in self._adapters:
                outcome[index] = UnknownAdapterError(f"specialist {request.specialist!r} was unloaded")
                continue
            tokens = self._encode(request)
            if len(tokens) >= self.max_positions:  # fail this request alone, not its whole batch
                outcome[index] = UserInputError(
                    f"prompt of {len(tokens)} tokens leaves no room in the {self.max_positions}-token context"
                )
                continue
            encoded[index] = tokens
            rows.extend((index, k) for k in range(request.n))
        if rows:
            width = max(len(p) for p in encoded.values())
            budget = self.max_positions - width
            ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for r, (index, _) in enumerate(rows):  # left padding: every prompt ends at column `width`
                tokens = encoded[index]
                ids[r, width - len(tokens) :] = torch.tensor(tokens, dtype=torch.long)
                mask[r, width - len(tokens) :] = 1
            row_requests = [requests[i] for i, _ in rows]
            max_new = [min(q.max_tokens, budget) for q in row_requests]
            stopper = _RowStopper(
                self.tokenizer, width, max_new, [q.stop for q in row_requests], self.eos_ids
            )
            sampler = _RowSampler(row_requests, [k for _, k in rows])
            kwargs: dict[str, Any] = {}
            if isinstance(self._model, PeftModel):
                kwargs["adapter_names"] = [
                    BASE_ROW if q.specialist is None else self._adapters[q.specialist] for q in row_requests
                ]
            from transformers import LogitsProcessorList, StoppingCriteriaList

            with torch.inference_mode():
                output = self._model.generate(
                    input_ids=ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    max_new_tokens=max(max_new),
                    do_sample=False,  # sampling happens per row in _RowSampler
                    logits_processor=LogitsProcessorList([sampler]),
                    stopping_criteria=StoppingCriteriaList([stopper]),
                    pad_token_id=self.pad_id,
                    **kwargs,
                )
            completions: dict[int, list[Completion]] = {}
            for r, (index, _) in enumerate(rows):
                completions.setdefault(index, []).append(
                    self._finish_row(output[r, width:], stopper, r, row_requests[r])
                )
            self.stats.batches += 1
            self.stats.rows += len(rows)
            self.stats.largest_batch_rows = max(self.stats.largest_batch_rows, len(rows))
            for index, done in completions.items():
                request = requests[index]
                used = sum(c.completion_tokens for c in done)
                self.stats.requests += 1
                self.stats.completion_tokens += used
                outcome[index] = GenerationResult(
                    completions=done,
                    prompt_tokens=len(encoded[index]),
                    completion_tokens=used,
                    specialist=request.specialist,
                )
        return [o if o is not None else ModelError("request was not served") for o in outcome]

    def _encode(self, request: GenerationRequest) -> list[int]:
        text = self.tokenizer.apply_chat_template(
            [m.model_dump() for m in request.messages], tokenize=False, add_generation_prompt=True
        )
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _finish_row(
        self, generated: Any, stopper: _RowStopper, row: int, request: GenerationRequest
    ) -> Completion:
        recorded = stopper.lengths[row]
        count = recorded if recorded is not None else int(generated.shape[0])
        reason: Literal["stop", "length"] = "stop" if stopper.reasons[row] == "stop" else "length"
        text = str(self.tokenizer.decode(generated[:count].tolist(), skip_special_tokens=True))
        cut = min((p for p in (text.find(s) for s in request.stop) if p >= 0), default=-1)
        if cut >= 0:
            text, reason = text[:cut], "stop"
        return Completion(text=text, finish_reason=reason, completion_tokens=count)


def _pick_device(device: str | None) -> str:
    """`device`, else `$RSI_DEVICE`, else CUDA when present, else the CPU."""
    chosen = device or os.environ.get("RSI_DEVICE")
    if chosen:
        return chosen
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _row_generator(seed: int | None, completion_index: int) -> Any:
    import torch

    generator = torch.Generator()
    if seed is None:
        generator.manual_seed(random.SystemRandom().randrange(2**63))
    else:  # completion k of a seeded request always draws from the same stream
        generator.manual_seed((seed * 1_000_003 + completion_index) % 2**63)
    return generator


class _RowSampler:
    """A LogitsProcessor that samples each row with its own temperature, top_p and seeded generator.

    It turns a sampled row into a one-hot score (the drawn token 0, all else -inf), so generate's
    greedy step picks exactly that token; temperature-0 rows are left alone (plain argmax).
    """

    def __init__(self, requests: list[GenerationRequest], completion_indexes: list[int]) -> None:
        self.settings = [(q.temperature, q.top_p) for q in requests]
        self.generators = [
            _row_generator(q.seed, k) if q.temperature > 0 else None
            for q, k in zip(requests, completion_indexes, strict=True)
        ]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        for row, generator in enumerate(self.generators):
            if generator is None:
                continue
            temperature, top_p = self.settings[row]
            # On the CPU, where the row's generator lives, whatever device the model runs on.
            probs = torch.softmax(scores[row].float().cpu() / temperature, dim=-1)
            if top_p < 1.0:
                ordered, order = torch.sort(probs, descending=True)
                keep = torch.cumsum(ordered, dim=-1) - ordered < top_p  # always keeps the top token
                probs = torch.zeros_like(probs).scatter(0, order[keep], ordered[keep])
            token = int(torch.multinomial(probs, 1, generator=generator))
            scores[row] = float("-inf")
            scores[row, token] = 0.0
        return scores


class _RowStopper:
    """A StoppingCriteria that ends each row on EOS, on its own stop strings, or at its own max_tokens."""

    def __init__(
        self, tokenizer: Any, prompt_width: int, max_new: list[int], stops: list[list[str]], eos_ids: set[int]
    ) -> None:
        self.tokenizer = tokenizer
        self.width = prompt_width
        self.max_new = max_new
        self.stops = stops
        self.eos_ids = eos_ids
        # A stop string can only newly appear within its length (in tokens, each at least one
        # character) of the end, so decoding a short tail each step is enough.
        self.windows = [max((len(s) for s in row), default=0) + 2 for row in stops]
        self.lengths: list[int | None] = [None] * len(max_new)
        self.reasons: list[str | None] = [None] * len(max_new)

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        generated = input_ids.shape[1] - self.width
        done = []
        for row in range(input_ids.shape[0]):
            if self.lengths[row] is None:
                last = int(input_ids[row, -1])
                if last in self.eos_ids or self.stops[row] and self._hit_stop(input_ids[row], row):
                    self._end(row, generated, "stop")
                elif generated >= self.max_new[row]:
                    self._end(row, generated, "length")
            done.append(self.lengths[row] is not None)
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    def _hit_stop(self, ids: Any, row: int) -> bool:
        start = max(self.width, ids.shape[0] - self.windows[row])
        tail = self.tokenizer.decode(ids[start:].tolist(), skip_special_tokens=True)
        return any(s in tail for s in self.stops[row])

    def _end(self, row: int, generated: int, reason: str) -> None:
        self.lengths[row] = generated
        self.reasons[row] = reason
