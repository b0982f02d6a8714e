"""rsi: recursive self-improvement of LLM agents, from evidence.

Data flows one way through the package:

    contracts (HCP) -> portfolio -> scheduler -> executor -> harness (model + sandbox) -> verifier
        -> store (coverage) -> promotion (new HCP revision in git) -> trajectories -> training -> adapter

Importing this package is cheap: heavy dependencies (torch, transformers, peft, vllm, docker,
submitit) are imported lazily by the modules that need them.
"""

__version__ = "0.1.0"
