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
def shared_workspace(tmp_path_factory: pytest.TempPathFactory, contract_examples):
    """One `rsi init` workspace per module, for tests that only read it."""
    from rsi.workspace import init_workspace

    with pytest.MonkeyPatch.context() as patch:
        for var, value in IDENTITY.items():
            patch.setenv(var, value)
        return init_workspace(tmp_path_factory.mktemp("shared") / "ws", examples=contract_examples)


@pytest.fixture(scope="session")
def contract_examples(tmp_path_factory: pytest.TempPathFactory):
    """The shipped hcp/ and portfolios/ with an empty tasks/: what contract tests need, copied fast."""
    import shutil

    from rsi.workspace import shipped_root

    root = tmp_path_factory.mktemp("examples")
    for part in ("hcp", "portfolios"):
        shutil.copytree(shipped_root() / part, root / part)
    (root / "tasks").mkdir()
    return root


@pytest.fixture
def workspace(tmp_path, git_identity, contract_examples):
    """A fresh `rsi init` workspace (real git) holding the shipped contracts and portfolios.

    Shadows the suite-wide fixture for these tests: the task suites are not needed here, and
    skipping their copy keeps each revise test well under a second of setup.
    """
    from rsi.workspace import init_workspace

    return init_workspace(tmp_path / "ws", examples=contract_examples)
