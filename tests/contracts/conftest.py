"""Fixtures for contract tests: a read-only workspace shared by a module (revise tests use `workspace`)."""

from __future__ import annotations

import pytest

IDENTITY = {
    "GIT_AUTHOR_NAME": "rsi tests",
    "GIT_AUTHOR_EMAIL": "tests@rsi.local",
    "GIT_COMMITTER_NAME": "rsi tests",
    "GIT_COMMITTER_EMAIL": "tests@rsi.local",
}


@pytest.fixture(scope="module")
def shared_workspace(tmp_path_factory: pytest.TempPathFactory):
    """One `rsi init` workspace per module, for tests that only read it."""
    from rsi.workspace import init_workspace

    with pytest.MonkeyPatch.context() as patch:
        for var, value in IDENTITY.items():
            patch.setenv(var, value)
        return init_workspace(tmp_path_factory.mktemp("shared") / "ws")
