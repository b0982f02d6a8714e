"""The workspace: a user's git repository holding contracts, portfolios, tasks and (ignored) runs.

Promotions commit to the user's own repository, never to the tool's. Commands find the workspace
like git finds a repository: walk up from the current directory to the first folder holding `hcp/`.

    <workspace>/
      hcp/<name>.toml             contracts (revisions are git commits + tags hcp/<name>/r<N>)
      portfolios/<name>.toml      portfolios
      tasks/<suite>/<task>/       task suites
      runs/                       ignored by git
        rsi.sqlite                the coverage store (default)
        <run-id>/                 trajectories, reports, plots of one run
        adapters/<hash>/          registered adapter revisions
        cache/                    converted models and other caches
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from rsi.errors import WorkspaceError

ENV_WORKSPACE = "RSI_WORKSPACE"
ENV_DB = "RSI_DB"


@dataclass(frozen=True)
class Workspace:
    """Owns the on-disk layout of one workspace (see the module docstring for the tree)."""

    root: Path

    @property
    def hcp_dir(self) -> Path:
        return self.root / "hcp"

    @property
    def portfolios_dir(self) -> Path:
        return self.root / "portfolios"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def cache_dir(self) -> Path:
        return self.runs_dir / "cache"

    @property
    def adapters_dir(self) -> Path:
        return self.runs_dir / "adapters"

    @property
    def db_url(self) -> str:
        """The coverage store: `RSI_DB` if set, else SQLite at runs/rsi.sqlite."""
        return os.environ.get(ENV_DB) or f"sqlite:///{self.runs_dir / 'rsi.sqlite'}"

    def contract_path(self, name: str) -> Path:
        return self.hcp_dir / f"{name}.toml"

    def portfolio_path(self, name: str) -> Path:
        return self.portfolios_dir / f"{name}.toml"

    def suite_dir(self, suite: str) -> Path:
        return self.tasks_dir / suite

    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / run_id


def find_workspace(start: Path | None = None, explicit: Path | None = None) -> Workspace:
    """The workspace given explicitly, by RSI_WORKSPACE, or found above `start` (default: cwd)."""
    chosen = explicit or (Path(os.environ[ENV_WORKSPACE]) if os.environ.get(ENV_WORKSPACE) else None)
    if chosen is not None:
        chosen = chosen.expanduser().resolve()
        if not (chosen / "hcp").is_dir():
            raise WorkspaceError(f"{chosen}: not a workspace (no hcp/ folder)", hint="create one with `rsi init DIR`")
        return Workspace(chosen)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "hcp").is_dir():
            return Workspace(folder)
    raise WorkspaceError(
        f"{here}: no workspace here or above (no hcp/ folder)",
        hint="run inside a workspace, pass --workspace DIR, or create one with `rsi init DIR`",
    )


def shipped_root() -> Path:
    """Folder holding the shipped examples (hcp/, portfolios/, tasks/).

    In a source checkout (the supported install: `pip install -e .`) that is the repository root;
    a wheel install carries them under rsi/data/examples.
    """
    repo = Path(__file__).resolve().parent.parent
    if (repo / "hcp").is_dir() and (repo / "tasks").is_dir():
        return repo
    packaged = Path(__file__).resolve().parent / "data" / "examples"
    if packaged.is_dir():
        return packaged
    raise WorkspaceError("the shipped examples are missing from this installation", hint="reinstall rsi")


def init_workspace(target: Path, examples: Path | None = None) -> Workspace:
    """Create a workspace at `target`: a git repo with the shipped examples, runs/ ignored, one commit."""
    import git  # lazy: GitPython spawns nothing at import, but keep `rsi --help` minimal

    target = target.expanduser().resolve()
    if (target / "hcp").exists():
        raise WorkspaceError(f"{target}: already a workspace (hcp/ exists)", hint="use it, or pick another folder")
    source = examples or shipped_root()
    target.mkdir(parents=True, exist_ok=True)
    for part in ("hcp", "portfolios", "tasks"):
        shutil.copytree(source / part, target / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (target / "runs").mkdir(exist_ok=True)
    gitignore = target / ".gitignore"
    lines = gitignore.read_text().splitlines() if gitignore.exists() else []
    for pattern in ("runs/", "__pycache__/"):
        if pattern not in lines:
            lines.append(pattern)
    gitignore.write_text("\n".join(lines) + "\n")
    try:
        repo = git.Repo(target)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        repo = git.Repo.init(target, initial_branch="main")
    with repo.config_writer() as config:
        if not config.has_option("user", "name"):
            config.set_value("user", "name", "rsi")
            config.set_value("user", "email", "rsi@localhost")
    # The git CLI, not GitPython's pure-Python index.add: 10x faster on the ~1,700 shipped task files.
    repo.git.add(".gitignore", "hcp", "portfolios", "tasks")
    repo.index.commit("rsi init: shipped contracts, portfolios and task suites")
    return Workspace(target)
