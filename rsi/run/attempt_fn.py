"""The attempt function a run hands its executor: one AttemptSpec -> model + sandbox + harness -> result.

It is a picklable object (it crosses SLURM): the model, sandbox and tasks are built lazily inside
the process that runs attempts, once per process, and shared by every thread there (the embedded
model batches the threads' requests). The trajectory folder appears atomically: the harness
writes into a hidden temporary sibling that is renamed into place only when the attempt is over,
so a killed run never leaves a half-written trajectory where a reader would look. Agent-made
folders are removed without recursion (rsi.verifier.tree), and the stored working directory keeps
only regular files within the verifier's caps (`_tame_workdir`).

Testing hooks (documented in docs, never set by a normal run):
- `RSI_MODEL_OVERRIDE=scripted:<file.json>`: every attempt gets a fresh ScriptedModel replaying
  `{"replies": [...], "tasks": {"<task id>": [...]}}` (per-task replies win), instead of the
  contract's model; the sandbox, harness and verifier stay real. With `"exact": true` its replies go
  through the workspace's response cache, as float32 replies do (tests of what the cache saves).
- `RSI_ATTEMPT_OVERRIDE=noop[:pass_rate[:sleep_s[:log_file]]]`: replace the whole attempt by
  `rsi.executors.noop.NoopAttempt` (no model, no sandbox) to test the orchestration alone; with
  a log file, each executed key is appended to it (crash tests count executions).

A caller that owns a live model (GRPO's policy, rsi/training/rollouts.py) passes it as `model_for`
(`ModelFor`: the attempt spec and its task -> the `ChatModel` to talk to) instead of the contract's
shared model; the sandbox, harness, verifier and folders stay the same. Such a model lives in this
process, so it runs with the local executor only (the orchestrator checks).

Setting: `RSI_SANDBOX_MODE=bwrap|namespaces|userns|bare` makes the local sandbox use that mode (an
error if it does not work here) instead of the strongest one; `bare` is how tests make a weakly
isolated run on a machine that isolates (docs/sandbox.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from rsi.errors import UserInputError
from rsi.executors.base import AttemptFn, AttemptResult, AttemptSpec
from rsi.executors.noop import NoopAttempt
from rsi.models.base import ChatModel
from rsi.models.cache import CACHE_ORIGIN
from rsi.run.layout import staging_dir
from rsi.tasks.spec import Task
from rsi.verdict import Verdict
from rsi.verifier.tree import remove_tree

ModelFor = Callable[[AttemptSpec, Task], ChatModel]  # a live model an attempt talks to (module docstring)
ENV_MODEL_OVERRIDE = "RSI_MODEL_OVERRIDE"
ENV_SANDBOX_MODE = "RSI_SANDBOX_MODE"
ENV_ATTEMPT_OVERRIDE = "RSI_ATTEMPT_OVERRIDE"

_lock = threading.Lock()
_models: dict[str, ChatModel] = {}
_sandboxes: dict[str, Any] = {}
_tasks: dict[str, Any] = {}


def _model_key(spec: Any) -> str:
    from rsi.contracts.hashing import canonical_json

    data = spec.model_dump(mode="json")
    return canonical_json({k: data[k] for k in ("base", "specialists", "serving")})


def _shared_model(config: Any, workspace_root: str) -> ChatModel:
    """One model per (base, specialists, serving) per process; built under a lock, used unlocked."""
    key = _model_key(config.spec)
    with _lock:
        model = _models.get(key)
        if model is None:
            from rsi.models.cache import with_cache
            from rsi.models.factory import make_model, specialist_paths
            from rsi.workspace import Workspace

            workspace = Workspace(Path(workspace_root))
            model = make_model(config.spec, workspace)
            # Exact requests are answered from the workspace's response cache (rsi.models.cache).
            model = with_cache(model, config.spec, workspace.root, specialist_paths(config.spec, workspace), origin="run")
            _models[key] = model
    return model


def _shared_sandbox(name: str) -> Any:
    with _lock:
        sandbox = _sandboxes.get(name)
        if sandbox is None:
            from rsi.sandbox.select import make_sandbox

            mode = os.environ.get(ENV_SANDBOX_MODE, "")
            sandbox = make_sandbox(name, mode=_checked_mode(mode, name)) if mode else make_sandbox(name)
            _sandboxes[name] = sandbox
    return sandbox


def _checked_mode(mode: str, backend: str) -> str:
    from rsi.sandbox.local import MODES

    if backend not in ("auto", "local") or mode not in MODES:
        raise UserInputError(f"{ENV_SANDBOX_MODE}={mode!r}: expected one of {', '.join(MODES)} with the local sandbox"
                             f" (the run asks for {backend!r})")
    return mode


def _load_task(task_dir: str, task_key: str) -> Any:
    with _lock:
        task = _tasks.get(task_dir)
    if task is None:
        from rsi.tasks.load import load_suite_defaults, load_task

        folder = Path(task_dir)
        task = load_task(folder, load_suite_defaults(folder.parent), suite=task_key.rpartition("/")[0])
        with _lock:
            _tasks[task_dir] = task
    return task


def shared_model_use() -> list[str]:
    """One line per model this process serves in-process (the embedded backend): how busy the run kept it.
    Handles on one shared model are reported once."""
    with _lock:
        models = list(_models.values())
    # Handles on one shared model say the same line: one each, in the order the models were opened.
    return list(dict.fromkeys(line for model in models if (line := model.use_summary())))


def close_shared(timeout_s: float = 120.0) -> None:
    """Release this process's models (the orchestrator calls it when a run ends).

    Queued generations are cancelled and the batch running now finishes (a process that exits with
    torch mid-generate in a worker thread aborts). Best effort within `timeout_s`: the run's results
    are already recorded, so past that the process does not wait.
    """
    with _lock:
        models = list(_models.values())
        _models.clear()
        _sandboxes.clear()
        _tasks.clear()

    def close_all() -> None:
        for model in models:
            with contextlib.suppress(Exception):
                model.close()

    closer = threading.Thread(target=close_all, name="rsi-close-models", daemon=True)
    closer.start()
    closer.join(timeout_s)


def _scripted_model(path: str, task_id: str, workspace_root: str) -> Any:
    from rsi.models.scripted import ScriptedModel

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    replies = data.get("tasks", {}).get(task_id) or data.get("replies") or []
    # delay_s: each reply takes that long, so a test's run lasts long enough to be signalled mid-run.
    model = ScriptedModel(list(replies), name=f"scripted:{Path(path).name}", delay_s=float(data.get("delay_s", 0.0)))
    if not data.get("exact"):
        return model
    # "exact": true declares the script's replies a function of the request (a fresh model per attempt, replies in
    # order, and the key holds the whole conversation): the response cache may serve them, as it serves float32.
    from rsi.models.cache import scripted_model_with_cache

    return scripted_model_with_cache(model, Path(path), Path(workspace_root))


def _replace_dir(tmp: Path, final: Path) -> None:
    if os.path.lexists(final):  # a retry of the same planned attempt: keep only the newest try
        remove_tree(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, final)


def _tame_workdir(attempt_dir: Path) -> None:
    """Keep, as the attempt's stored working directory, only what a reader can safely walk.

    The agent's folder may hold FIFOs, sockets, links into the host, sparse files of any size, modes
    like 000 and folders nested thousands deep; readers of runs/ (exports, hashing, `rglob`) must
    not meet those. The regular files within the verifier's caps are copied into a fresh folder
    (the same rules the verifier stages by, reserved names kept), and the agent's folder is removed.
    """
    from rsi.verifier.stage import stage_submission

    workdir = attempt_dir / "workdir"
    if not os.path.lexists(workdir):
        return
    tamed = attempt_dir / ".workdir-tamed"
    remove_tree(tamed)
    with contextlib.suppress(OSError):  # the attempt's verdict stands even if its files cannot be tamed
        tamed.mkdir()
        staged = stage_submission(workdir, tamed, reserved_names=False)
        if staged.refused:
            refused = "\n".join(staged.refused)[:200_000] + "\n"
            (attempt_dir / "workdir-refused.txt").write_text(refused, encoding="utf-8")
        remove_tree(workdir)
        os.replace(tamed, workdir)
    remove_tree(tamed)


def _result_from(spec: AttemptSpec, outcome: Any, out_dir: Path, tmp_dir: Path, started: datetime) -> AttemptResult:
    """Adapt the harness's AttemptOutcome (rsi.harness.attempt) to the executor's result."""
    import hashlib

    trajectory = str(outcome.trajectory_path or "")
    if trajectory.startswith(str(tmp_dir)):
        trajectory = str(out_dir) + trajectory[len(str(tmp_dir)):]
    code = outcome.final_code
    return AttemptResult(
        key=spec.key,
        verdict=Verdict(outcome.verdict),
        reason=str(outcome.reason or "")[:4000],
        error_class=str(outcome.error_class or ""),
        tokens=int(outcome.prompt_tokens) + int(outcome.completion_tokens),
        completion_tokens=int(outcome.completion_tokens),
        cache_hits=int(getattr(outcome, "cache_hits", 0)),
        cache_misses=int(getattr(outcome, "cache_misses", 0)),
        tokens_not_spent=int(getattr(outcome, "tokens_not_spent", 0)),
        wall_s=float(outcome.wall_s),
        trajectory_path=trajectory,
        final_code_hash=hashlib.sha256(code.encode("utf-8")).hexdigest()[:16] if code else "",
        started=outcome.started_at or started,
        finished=outcome.finished_at or datetime.now(UTC),
        host=f"{socket.gethostname()}:{os.getpid()}",
    )


class HarnessAttempt(BaseModel):
    """Runs one attempt for real: task, model (shared per process), sandbox, harness, verifier."""

    model_config = ConfigDict(frozen=True)
    workspace_root: str
    sandbox: str = "auto"
    model_override: str = ""
    model_for: ModelFor | None = None  # a live model of this process (module docstring); None: the contract's

    def isolation(self) -> Any:
        """What this process's sandbox isolates (`rsi.sandbox.base.Isolation`; builds it if needed)."""
        return _shared_sandbox(self.sandbox).isolation()

    def __call__(self, spec: AttemptSpec) -> AttemptResult:
        from rsi.harness.attempt import run_attempt

        started = datetime.now(UTC)
        task = _load_task(spec.task_dir, spec.task_key)
        if self.model_for is not None:
            model = self.model_for(spec, task)
        elif self.model_override.startswith("scripted:"):
            model = _scripted_model(self.model_override.partition(":")[2], task.id, self.workspace_root)
        else:
            model = _shared_model(spec.config, self.workspace_root)
        sandbox = _shared_sandbox(self.sandbox)
        out_dir = Path(spec.out_dir)
        tmp_dir = staging_dir(out_dir, f"{os.getpid()}-{threading.get_ident()}")
        remove_tree(tmp_dir)
        tmp_dir.mkdir(parents=True)
        origin = CACHE_ORIGIN.set(spec.run_id)  # a reply made now is recorded as this run's
        try:
            outcome = run_attempt(spec.config, task, model, sandbox, tmp_dir, spec.seed)
            result = _result_from(spec, outcome, out_dir, tmp_dir, started)
            _tame_workdir(tmp_dir)
            _replace_dir(tmp_dir, out_dir)
        finally:
            CACHE_ORIGIN.reset(origin)
            remove_tree(tmp_dir)
        return result


def make_attempt_fn(workspace_root: Path, sandbox: str, model_for: ModelFor | None = None) -> AttemptFn:
    """The attempt function for a run, honouring the testing hooks; `model_for` a live model (module docstring)."""
    override = os.environ.get(ENV_ATTEMPT_OVERRIDE, "")
    if override:
        kind, _, rest = override.partition(":")
        if kind != "noop":
            raise UserInputError(f"{ENV_ATTEMPT_OVERRIDE}={override!r}: only 'noop[:pass_rate[:sleep_s[:log_file]]]' is known")
        parts = rest.split(":", 2) if rest else []
        try:
            return NoopAttempt(
                pass_rate=float(parts[0]) if parts and parts[0] else 0.5,
                sleep_s=float(parts[1]) if len(parts) > 1 and parts[1] else 0.0,
                log_path=parts[2] if len(parts) > 2 else "",
            )
        except ValueError as error:
            raise UserInputError(f"{ENV_ATTEMPT_OVERRIDE}={override!r}: {error}") from error
    model_override = os.environ.get(ENV_MODEL_OVERRIDE, "")
    if model_override:
        kind, _, path = model_override.partition(":")
        if kind != "scripted" or not path:
            raise UserInputError(f"{ENV_MODEL_OVERRIDE}={model_override!r}: expected scripted:<file.json>")
        if not Path(path).is_file():
            raise UserInputError(f"{ENV_MODEL_OVERRIDE}: {path}: no such file")
        model_override = f"scripted:{Path(path).resolve()}"
    if os.environ.get(ENV_SANDBOX_MODE):
        _checked_mode(os.environ[ENV_SANDBOX_MODE], sandbox)  # a typo fails the run at start, not every attempt
    return HarnessAttempt(workspace_root=str(workspace_root), sandbox=sandbox, model_override=model_override,
                          model_for=model_for)
