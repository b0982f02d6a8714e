"""Fixtures for `rsi eval` tests: the training folder's real exported dataset and scripted-model hook.

The evaluation needs what the fine-tune tests build (a run, an export, a registered adapter), so the
fixtures are shared from tests/training/conftest.py instead of copied.
"""

from tests.training.conftest import scripted_env, shim

__all__ = ["scripted_env", "shim"]
