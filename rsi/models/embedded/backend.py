"""The embedded backend: one frozen base model and its LoRA specialists, in process, on the CPU.

Many threads call `generate()` at once (the harness runs several attempts; `rsi serve` answers many
HTTP requests). Each call becomes a `_Pending` in a queue; one worker thread owns the model and runs
a **continuous batch** (`rsi.models.embedded.batcher`): between two decoding steps it admits queued requests
(each prefilled alone, its rows joining the running batch) and lets finished rows leave, so a
request that arrives while others decode waits one step, not until the whole batch ends. Batching
is where the CPU speed comes from (one row per step costs nearly as much as eight), so everything
that could split a batch is done per row instead (`rsi.models.embedded.rows`):

- **specialists**: peft's mixed-adapter forward (`adapter_names=[...]`, `"__base__"` for the bare
  base) serves rows for different adapters, and the base, in the same step; an adapter that is
  replaced or unloaded while rows still use it is deleted only once they have left. A step whose
  rows all use one adapter runs on that adapter's merged weights where the number format allows
  (`rsi.models.embedded.merged_adapters`): the base's speed, not the LoRA layers' extra calls;
- **sampling**: each row draws from its own seeded generator with its own temperature and top_p
  (greedy rows keep the argmax), so a seeded request gets the same completion whatever else
  shares its steps;
- **stop strings and max_tokens**: each row ends on its own stop strings, its own `max_tokens` or
  EOS, and leaves the batch at once. Stop strings are excluded from the returned text, as in the
  OpenAI API and vLLM.

`submit()` returns a `ServedFuture` (`rsi.models.served`): its `started` event marks when the
request left the queue, so callers time the model from then (model load and queue wait are not the
model's time), and `abandon()` drops a request nobody waits for at the next step.

Stopping: `close()` ends the worker at the next decoding step (rows in flight fail), so a stopped run
waits one step, not for its generations to end. Every call into torch off the main thread (a step,
a load, an adapter change) runs in a `rsi.models.embedded.native` section, so that the process never shuts
the interpreter down while one runs: that aborted the process (SIGABRT) on Ctrl-C.

On the CPU, linear layers run on prepacked oneDNN weights (`rsi.models.embedded.packed_linear`: 2x a decoding
step in float32), and a step with no LoRA layer active runs `rsi.models.embedded.lean_step` instead of transformers'
forward (`RSI_LEAN_STEP=0` turns it off). Threads and number format are chosen by measurement on the machine at hand (`rsi.models.embedded.tuning`):
in float32 a row batched with others decodes the same greedy tokens as alone (tested); in bfloat16
padding and batch shape change the kernels' rounding, so a near-tie can flip. Attention is SDPA: for
8 rows of 1,500 prompt tokens its prefill took half the time and less memory than 'eager'.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
import warnings
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi.errors import ModelError, UserInputError
from rsi.models.base import Completion, GenerationRequest, GenerationResult
from rsi.models.embedded.batcher import RunningBatch, prefill, select_rows
from rsi.models.embedded.lean_step import lean_decoder
from rsi.models.embedded.merged_adapters import MergedAdapters
from rsi.models.embedded.native import ProcessExiting, exiting, native_section
from rsi.models.embedded.packed_linear import pack_linears
from rsi.models.embedded.rows import Row
from rsi.models.embedded.tuning import (
    ENV_THREADS,
    Choice,
    ThreadFollower,
    choose_dtype,
    choose_threads,
    one_torch_thread_here,
    pick_device,
)
from rsi.models.served import ServedFuture

__all__ = ["ENV_THREADS", "BASE_ROW", "BatchStats", "EmbeddedModel", "UnknownAdapterError"]

BASE_ROW = "__base__"  # peft's name for "no adapter" in a mixed-adapter batch


class UnknownAdapterError(ModelError):
    """A request named a specialist that is not loaded."""


@dataclass
class _Pending:
    request: GenerationRequest
    future: ServedFuture
    submitted: float = field(default_factory=time.monotonic)


@dataclass
class _Job:
    """A request admitted into the batch: its rows' finished completions so far."""

    pending: _Pending
    prompt_tokens: int
    completions: list[Completion | None]
    failed: bool = False

    def finish_row(self, index: int, completion: Completion) -> bool:
        """Record one row; True once every row of the request is done."""
        self.completions[index] = completion
        return all(c is not None for c in self.completions)


@dataclass
class BatchStats:
    """How much batching happened and where the model's time went (benchmarks, tests, a run's last line).

    Times are milliseconds of wall time: `step_ms` in decoding steps, `prefill_ms` in prefills,
    `serving_ms` since the worker started. A model that is busy only part of the time, or whose steps
    carry few rows, is one that the run does not keep fed: that is what `summary()` says.
    """

    steps: int = 0
    row_steps: int = 0
    prefills: int = 0
    rows: int = 0
    requests: int = 0
    completion_tokens: int = 0
    largest_batch_rows: int = 0
    prefill_tokens: int = 0
    step_ms: int = 0
    prefill_ms: int = 0
    serving_ms: int = 0  # derived when read (`EmbeddedModel.batch_stats`); the live counters leave it 0

    @property
    def mean_batch_rows(self) -> float:
        return self.row_steps / self.steps if self.steps else 0.0

    def summary(self, max_batch: int) -> str:
        """One line: steps and rows per step, busy share, prefill share, completion tokens per busy second."""
        busy_ms = self.step_ms + self.prefill_ms
        if not self.steps or not busy_ms:
            return "no decoding steps"
        busy = f"busy {busy_ms / self.serving_ms:.0%} of {self.serving_ms / 1000:.0f} s" if self.serving_ms else ""
        return (f"{self.requests} requests, {self.steps} decoding steps with {self.mean_batch_rows:.1f} of "
                f"{max_batch} rows on average; {busy} ({self.prefill_ms / busy_ms:.0%} of it prefilling "
                f"{self.prefill_tokens} prompt tokens); {self.completion_tokens / busy_ms * 1000:.1f} completion "
                "tokens per busy second")


_STOP = object()


def _as_model_error(error: Exception) -> Exception:
    if isinstance(error, ModelError | UserInputError):
        return error
    return ModelError(f"generation failed: {type(error).__name__}: {error}")


class EmbeddedModel:
    """A transformers + peft model behind the `ChatModel` interface, batching concurrent calls continuously.

    `folder` is an HF-format model folder (see `rsi.models.embedded.weights.hf_folder`). `dtype` is the format
    asked for; on a CPU a narrow format is used only where it is measured faster
    (`rsi.models.embedded.tuning.choose_dtype`), and `RSI_DTYPE` overrides. `gather_s` is how long an idle
    worker waits after a first request for others, so that requests arriving together start together.
    `merge_adapters` runs a step whose rows all use one adapter on its merged weights; None (the default)
    merges unless the format is float32, where a row must decode the same tokens alone or batched.
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
        merge_adapters: bool | None = None,
    ) -> None:
        self.name = name
        self.folder = Path(folder)
        self.max_batch = max_batch
        self.gather_s = gather_s
        self.stats = BatchStats()
        self._adapters: dict[str, str] = {}  # public name -> peft adapter name (peft names can't hold '.')
        self._adapter_paths: dict[str, str] = {}
        self._retired: set[str] = set()  # peft adapters to delete once no running row uses them
        self._counter = itertools.count(1)
        self._lock = threading.RLock()  # guards the model and the batch: a step vs adapter load/unload
        self._queue: queue.Queue[Any] = queue.Queue()
        self._batch = RunningBatch()
        self._closed = False
        self._stopping = threading.Event()  # set by close(): the worker ends before its next step
        self._lora_enabled: bool | None = None  # whether the LoRA layers are on (None: not known)
        self.device = pick_device(device)
        self.threads: Choice
        self._follow: ThreadFollower | None = None  # set by the worker thread once it has chosen
        self.dtype: Choice
        self._merged: MergedAdapters | None = None
        self.load_s = 0.0
        self._serving_since = time.monotonic()
        # The worker thread owns all of this model's torch work, its load and probes included; the
        # creating thread keeps one torch thread (`one_torch_thread_here` says why: 3-7x on small ops).
        if self.device.startswith("cpu"):
            one_torch_thread_here()
        self._loaded = threading.Event()
        self._load_error: BaseException | None = None
        self._worker = threading.Thread(
            target=self._load_and_serve, args=(dtype, merge_adapters), name=f"rsi-embedded-{name}", daemon=True
        )
        self._worker.start()
        self._loaded.wait()
        if self._load_error is not None:
            raise self._load_error

    # -- loading ---------------------------------------------------------------------------------

    def _load_and_serve(self, dtype: str, merge_adapters: bool | None) -> None:
        """The worker thread: choose threads and format, load, then serve until closed."""
        started = time.monotonic()
        try:
            with native_section(f"loading model {self.name!r}"):
                self.threads = choose_threads()
                # Re-chosen between decoding steps when the load level changes (rsi.models.embedded.tuning).
                self._follow = ThreadFollower(self.threads) if self.device.startswith("cpu") else None
                self.dtype = choose_dtype(dtype, self.device)
                merge = str(self.dtype.value) != "float32" if merge_adapters is None else merge_adapters
                self._merged = MergedAdapters() if merge else None
                self._load(str(self.dtype.value))
        except BaseException as error:  # noqa: BLE001 - raised by the constructor, in its caller's thread
            self._load_error = error
            self._loaded.set()
            return
        self.load_s = time.monotonic() - started
        self._serving_since = time.monotonic()
        self._loaded.set()
        self._serve_forever()

    def _load(self, dtype: str) -> None:
        import torch

        torch.set_num_threads(int(self.threads.value))  # this thread's (see rsi.models.embedded.tuning.one_torch_thread_here)
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from rsi.models.embedded.weights import offline_hub, quiet_transformers

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
        self.packed_linears = pack_linears(model) if self.device.startswith("cpu") else 0
        self._lean = lean_decoder(model)
        self._base: Any = model
        self._model: Any = model
        self.max_positions = int(getattr(model.config, "max_position_embeddings", 2048))
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else self.tokenizer.eos_token_id)
        eos = model.generation_config.eos_token_id
        eos = eos if eos is not None else self.tokenizer.eos_token_id
        self.eos_ids = {int(e) for e in (eos if isinstance(eos, list) else [eos])}
        self._warm_up()

    def _warm_up(self) -> None:
        """One prefill and one step now, so that first-call kernel set-up is load time, not a request's."""
        import torch

        batch = RunningBatch()
        with torch.inference_mode():
            cache, mask, _ = prefill(self._model, [[self.pad_id] * 4, [self.pad_id] * 3], None, self.device)
            rows = [Row(None, k, BASE_ROW, GenerationRequest(messages=[]), 1, 4 - k, tokens=[self.pad_id]) for k in (0, 1)]
            batch.join(rows, cache, mask)
            batch.step(self._model, None, self._lean)

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
        with self._lock, native_section(f"loading adapter {name!r}"), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # peft calls transformers' deprecated helpers
            self._restore_weights()
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
            self._lora_enabled = None  # new LoRA layers start enabled; the next forward sets them all
            old = self._adapters.get(name)
            self._adapters[name] = internal
            self._adapter_paths[name] = str(folder)
            if old is not None:
                self._retired.add(old)
                self._collect_adapters()

    def unload_adapter(self, name: str) -> None:
        """Stop serving `name` (rows already generating with it finish). Raises `UnknownAdapterError`."""
        with self._lock, native_section(f"unloading adapter {name!r}"):
            internal = self._adapters.pop(name, None)
            if internal is None:
                raise UnknownAdapterError(f"adapter {name!r} is not loaded")
            self._adapter_paths.pop(name, None)
            self._retired.add(internal)
            self._collect_adapters()

    def _collect_adapters(self) -> None:
        """Delete retired adapters no running row uses; with none left, strip the LoRA layers (full speed)."""
        from peft import PeftModel

        if not self._retired or not isinstance(self._model, PeftModel):
            return
        in_use = {row.adapter for row in self._batch.rows}
        if not self._retired - in_use:
            return  # every retired adapter still has rows: keep it (and its merged weights) until they leave
        self._restore_weights()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # peft warns when the active adapter is deleted: expected here
            if not self._adapters and not (in_use - {BASE_ROW}):
                self._model = self._model.unload()
                self._base = self._model
                self._lora_enabled = None
                self._retired.clear()
                return
            for internal in sorted(self._retired - in_use):
                self._model.delete_adapter(internal)
                self._retired.discard(internal)

    def _restore_weights(self) -> None:
        """The base's own weights back in the base layers, before peft adds, deletes or strips LoRA layers."""
        if self._merged is not None:
            self._merged.restore(self._model)

    def adapters(self) -> dict[str, str]:
        """Loaded adapters: name -> folder."""
        with self._lock:
            return dict(self._adapter_paths)

    # -- serving ---------------------------------------------------------------------------------

    def submit(self, request: GenerationRequest) -> ServedFuture:
        """Queue `request`; the future resolves when all its rows are done."""
        if self._closed or not self._worker.is_alive():
            raise ModelError(f"model {self.name!r} is closed")
        if request.specialist is not None and request.specialist not in self._adapters:
            raise UnknownAdapterError(
                f"specialist {request.specialist!r} is not loaded",
                hint=f"loaded: {', '.join(sorted(self._adapters)) or 'none'}",
            )
        if request.n > self.max_batch:
            raise UserInputError(f"n={request.n} exceeds this model's max_batch={self.max_batch}")
        pending = _Pending(request, ServedFuture())
        self._queue.put(pending)
        return pending.future

    def generate(self, request: GenerationRequest) -> GenerationResult:
        return self.submit(request).result()

    def number_format(self) -> str:
        return str(self.dtype.value)

    def batch_stats(self) -> dict[str, int]:
        return {**vars(self.stats), "serving_ms": int((time.monotonic() - self._serving_since) * 1000)}

    def use_summary(self) -> str:
        """Where this model's time went since it started serving (`BatchStats.summary`)."""
        follow = self._follow
        threads = f"; torch threads {', '.join(follow.changes)} (followed the load)" if follow and follow.changes else ""
        return f"model {self.name!r}: " + BatchStats(**self.batch_stats()).summary(self.max_batch) + threads

    def close(self, timeout_s: float = 600.0) -> None:
        """Cancel queued work, fail the rows in flight at the next step, stop the worker, drop the model.

        Requests still open at close time are abandoned ones (a caller that timed out, or a run that
        ended): finishing them would only delay exit. The worker is waited for up to `timeout_s`
        (one decoding step, normally); a process that must exit sooner relies on `rsi.models.embedded.native`.
        """
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        self._queue.put(_STOP)  # wakes an idle worker
        self._worker.join(timeout=timeout_s)
        if not self._worker.is_alive() and not exiting():  # free the weights now, not at the last reference
            self._model = self._base = self._merged = None  # merged copies hold weights too

    def _serve_forever(self) -> None:
        waiting: deque[_Pending] = deque()
        try:
            while not self._stopping.is_set():
                if not self._batch.rows and not waiting:  # idle: sleep until a request comes
                    first = self._queue.get()
                    if first is _STOP or self._drain(waiting, self.gather_s, first):
                        break
                with self._lock:
                    if self._drain(waiting, 0.0) or self._stopping.is_set():  # queued until now joins this step
                        break
                    with native_section(f"model {self.name!r} generating"):
                        self._serve_step(waiting)
                        self._follow_load()
        except ProcessExiting:
            pass  # the process is exiting: no more steps
        finally:
            try:
                with native_section(f"model {self.name!r} closing"):
                    self._abort(waiting)
            except ProcessExiting:  # tell the callers, but leave the tensors alone: freeing them is torch's work
                self._abort(waiting, free=False)

    def _follow_load(self) -> None:
        """Apply a new thread choice on this serving thread once the load level has moved."""
        try:
            new = self._follow.poll() if self._follow is not None else None
        except Exception:  # noqa: BLE001 - a failed look at the load must not stop serving: keep the threads
            self._follow, new = None, None
        if new is not None:
            import torch

            torch.set_num_threads(int(new.value))
            self.threads = new

    def _serve_step(self, waiting: deque[_Pending]) -> None:
        """Admit what waits, then one decoding step for the batch (the worker holds the lock)."""
        try:
            self._admit(waiting)
            self._retire_rows()
            if self._batch.rows and not self._stopping.is_set():
                self._step()
                self._retire_rows()
        except Exception as error:  # noqa: BLE001 - fail what is in flight, keep serving
            self._fail_batch(ModelError(f"generation failed: {type(error).__name__}: {error}"))

    def _fail_batch(self, error: ModelError, free: bool = True) -> None:
        """Fail every row in flight; with `free`, drop the batch (and its tensors) too."""
        for row in self._batch.rows:
            self._fail(row.owner, error)
        if free:
            self._batch = RunningBatch()

    def _drain(self, waiting: deque[_Pending], wait_s: float, first: Any = None) -> bool:
        """Move `first` and queued requests into `waiting` (for up to `wait_s`); True when the stop marker came."""
        if first is not None:
            waiting.append(first)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                remaining = deadline - time.monotonic()
                item = self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait()
            except queue.Empty:
                return False
            if item is _STOP:
                return True
            waiting.append(item)

    def _abort(self, waiting: deque[_Pending], free: bool = True) -> None:
        with self._lock:
            self._fail_batch(ModelError(f"model {self.name!r} was closed before the request finished"), free)
        leftovers = list(waiting)
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not _STOP:
                leftovers.append(item)
        for pending in leftovers:
            pending.future.cancel()

    def _admit(self, waiting: deque[_Pending]) -> None:
        """Prefill queued requests together, first come first served, while their rows fit in `max_batch`."""
        jobs: list[tuple[_Job, list[int], str]] = []
        rows = len(self._batch)
        while waiting and rows + waiting[0].request.n <= self.max_batch:
            pending = waiting.popleft()
            if not pending.future.set_running_or_notify_cancel():
                continue  # cancelled while queued: costs nothing
            try:
                prompt, adapter = self._prepare(pending.request)
            except Exception as error:  # noqa: BLE001 - this request fails alone, not the batch
                pending.future.set_exception(_as_model_error(error))
                continue
            jobs.append((_Job(pending, len(prompt), [None] * pending.request.n), prompt, adapter))
            rows += pending.request.n
        if jobs:
            try:
                self._prefill(jobs)
            except Exception as error:  # noqa: BLE001 - a failed prefill fails its requests, not the batch
                for job, _, _ in jobs:
                    self._fail(job, _as_model_error(error))

    def _prepare(self, request: GenerationRequest) -> tuple[list[int], str]:
        """The prompt's tokens and the peft adapter name its rows use; raises for a request that cannot run."""
        adapter = BASE_ROW
        if request.specialist is not None:
            if request.specialist not in self._adapters:
                raise UnknownAdapterError(f"specialist {request.specialist!r} was unloaded")
            adapter = self._adapters[request.specialist]
        prompt = self._encode(request)
        if len(prompt) >= self.max_positions:
            raise UserInputError(
                f"prompt of {len(prompt)} tokens leaves no room in the {self.max_positions}-token context"
            )
        return prompt, adapter

    def _prefill(self, jobs: list[tuple[_Job, list[int], str]]) -> None:
        import torch

        adapters = self._adapter_mode([a for _, _, a in jobs])
        started = time.perf_counter()
        with torch.inference_mode():
            cache, mask, logits = prefill(self._model, [p for _, p, _ in jobs], adapters, self.device)
        self.stats.prefill_ms += round((time.perf_counter() - started) * 1000)
        self.stats.prefill_tokens += sum(len(p) for _, p, _ in jobs)
        index: list[int] = []
        rows: list[Row] = []
        for j, (job, prompt, adapter) in enumerate(jobs):
            request = job.pending.request
            for k in range(request.n):
                row = Row.start(job, k, adapter, request, len(prompt), self.max_positions - len(prompt))
                row.accept(logits[j], self.tokenizer, self.eos_ids)
                rows.append(row)
                index.append(j)
        if index != list(range(len(jobs))):
            cache, mask = select_rows(cache, mask, index)
        self._batch.join(rows, cache, mask)
        self.stats.prefills += 1
        self.stats.rows += len(rows)

    def _adapter_mode(self, adapters: list[str]) -> list[str] | None:
        """Set the model up for a forward whose rows use `adapters`; returns per-row adapter names or None.

        peft's per-row path (`adapter_names`) gathers and scatters every LoRA layer's rows, which on a
        small model adds about as many tensor ops as the layers themselves. A step whose rows all use
        the bare base runs with the LoRA layers disabled, and one whose rows all use one adapter runs it
        as the active adapter: the same arithmetic without the gathers, or, where `_merged` allows, on
        its merged weights with the LoRA layers disabled (no LoRA calls at all). The layers' state is switched
        only when it changes: peft's `disable_adapter()` context walks the whole model twice and
        computes its status on every entry (37 ms measured under load, against 150-400 ms for a step of 8 rows).
        """
        from peft import PeftModel

        if not isinstance(self._model, PeftModel):
            return None
        used = set(adapters)
        only = next(iter(used)) if len(used) == 1 else None
        wanted = None if only in (None, BASE_ROW) else only  # an adapter whose merged weights could serve the step
        merged = self._merged is not None and self._merged.use(self._model, wanted) and wanted is not None
        self._lora_layers(enabled=not merged and used != {BASE_ROW})
        if only is None:
            return adapters
        if not merged and only != BASE_ROW and self._model.active_adapter != only:
            self._model.set_adapter(only, inference_mode=True)
        return None

    def _lora_layers(self, enabled: bool) -> None:
        """Enable or disable every LoRA layer, only when that changes (`_lora_enabled` None: not known)."""
        if self._lora_enabled is not enabled:
            if enabled:
                self._model.base_model.enable_adapter_layers()
            else:
                self._model.base_model.disable_adapter_layers()
            self._lora_enabled = enabled

    def _step(self) -> None:
        import torch

        rows = self._batch.rows
        adapters = self._adapter_mode([row.adapter for row in rows])
        lean = self._lean if self._lora_enabled is not True else None  # the lean step has no LoRA layers
        started = time.perf_counter()
        try:
            with torch.inference_mode():
                logits = self._batch.step(self._model, adapters, lean)
        except Exception as error:  # noqa: BLE001 - a failed forward fails the rows in it, not the worker
            failure = ModelError(f"generation failed: {type(error).__name__}: {error}")
            for row in rows:
                self._fail(row.owner, failure)
            return
        greedy = logits.argmax(dim=-1).tolist()
        for index, row in enumerate(rows):
            row.accept(logits[index], self.tokenizer, self.eos_ids, greedy[index])
            row.owner.pending.future.progress.mark()  # a token: the request is moving (rsi.models.served)
        self.stats.step_ms += round((time.perf_counter() - started) * 1000)
        self.stats.steps += 1
        self.stats.row_steps += len(rows)
        self.stats.largest_batch_rows = max(self.stats.largest_batch_rows, len(rows))

    def _retire_rows(self) -> None:
        """Resolve finished requests, drop rows that are done or abandoned, free retired adapters."""
        keep: list[int] = []
        for index, row in enumerate(self._batch.rows):
            job: _Job = row.owner
            if job.failed:
                continue
            if job.pending.future.abandoned.is_set():
                self._fail(job, ModelError("request abandoned by its caller"))
                continue
            if not row.done:
                keep.append(index)
            elif job.finish_row(row.index, row.completion(self.tokenizer)):
                self._resolve(job)
        self._batch.keep(keep)
        self._collect_adapters()

    def _resolve(self, job: _Job) -> None:
        done = [c for c in job.completions if c is not None]
        used = sum(c.completion_tokens for c in done)
        self.stats.requests += 1
        self.stats.completion_tokens += used
        result = GenerationResult(
            completions=done,
            prompt_tokens=job.prompt_tokens,
            completion_tokens=used,
            specialist=job.pending.request.specialist,
            latency_s=time.monotonic() - job.pending.submitted,
        )
        job.pending.future.set_result(result)

    @staticmethod
    def _fail(job: _Job, error: Exception) -> None:
        if not job.failed:
            job.failed = True
            job.pending.future.set_exception(error)

    def _encode(self, request: GenerationRequest) -> list[int]:
        text = self.tokenizer.apply_chat_template(
            [m.model_dump() for m in request.messages], tokenize=False, add_generation_prompt=True
        )
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
