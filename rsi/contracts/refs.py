"""Contract references: turn what a user typed into a loaded contract.

A REF is one of (tried in this order):

- a path to a `.toml` file (relative to the current directory, else to the workspace root; or absolute);
- `NAME@rN` — revision N of hcp/NAME.toml, read from the git tag `hcp/NAME/rN`;
- `GITREV:path` — the file at `path` (relative to the workspace root) as of any git revision;
- `NAME` — hcp/NAME.toml in the workspace's working tree.

Contracts read from git resolve their prompt files from the same revision.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from pathlib import Path

from rsi.contracts.gitio import (
    GitReader,
    open_repo,
    read_at,
    repo_path,
    resolve_commit,
    revision_tags,
    tag_name,
)
from rsi.contracts.load import LoadedContract, load_contract, load_contract_text
from rsi.errors import ContractError, Problem, UserInputError
from rsi.workspace import Workspace

NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
NAME_AT_REVISION = re.compile(r"^([a-z0-9][a-z0-9_.-]*)@r(\d+)$")


def load_contract_at(workspace: Workspace, rev: str, relative: str, ref: str) -> LoadedContract:
    """The contract at workspace-relative `relative` as of git revision `rev`."""
    repo = open_repo(workspace)
    commit = resolve_commit(repo, rev).hexsha
    in_repo = repo_path(repo, workspace.root / relative)
    text = read_at(repo, commit, in_repo)
    if text is None:
        raise UserInputError(f"{ref}: {in_repo} does not exist at {rev}")
    reader = GitReader(repo, commit, posixpath.dirname(in_repo))
    return load_contract_text(text, workspace.root / relative, ref, reader, file_label=f"{rev}:{in_repo}")


def _check_name(loaded: LoadedContract, name: str, file_label: str) -> LoadedContract:
    if loaded.name != name:
        raise ContractError(
            [Problem(file_label, None, "hcp.name", f"is '{loaded.name}' but the file is named {name}.toml")],
            hint="a contract's hcp.name must match its file name",
        )
    return loaded


def _pinned_ref(workspace: Workspace, loaded: LoadedContract) -> str:
    """`NAME@rN` when the working file is exactly tagged revision N (so lineage can name it), else `NAME`.

    Configurations record their contract_ref; a pinned ref stays meaningful after later revisions.
    """
    import git

    try:
        repo = git.Repo(workspace.root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return loaded.name
    try:
        tag = revision_tags(repo, loaded.name).get(loaded.revision)
        if tag is None:
            return loaded.name
        tagged = read_at(repo, tag.commit.hexsha, repo_path(repo, loaded.path))
    except (UserInputError, ValueError):
        return loaded.name
    finally:
        repo.close()  # no lingering `git cat-file` helpers from a lookup done on every resolve
    return f"{loaded.name}@r{loaded.revision}" if tagged == loaded.source else loaded.name


def resolve_ref(workspace: Workspace, ref: str) -> LoadedContract:
    """Load the contract a REF names (see the module docstring). Bad refs raise UserInputError."""
    text = ref.strip()
    as_path = Path(text).expanduser()
    if text.endswith(".toml") and ":" not in text or as_path.is_file():
        from_root = workspace.root / as_path
        if not as_path.is_file() and not as_path.is_absolute() and from_root.is_file():
            return load_contract(from_root)  # `hcp/x.toml` typed from a sub-folder of the workspace
        return load_contract(as_path)
    match = NAME_AT_REVISION.match(text)
    if match:
        name, revision = match.group(1), int(match.group(2))
        repo = open_repo(workspace)
        tags = revision_tags(repo, name)
        if revision not in tags:
            known = ", ".join(f"r{n}" for n in sorted(tags)) or "none"
            raise UserInputError(
                f"{text}: no tag {tag_name(name, revision)} (tagged revisions of {name}: {known})",
                hint=f"see `rsi hcp log {name}`",
            )
        relative = workspace.contract_path(name).relative_to(workspace.root).as_posix()
        loaded = load_contract_at(workspace, tags[revision].commit.hexsha, relative, text)
        return _check_name(loaded, name, text)
    if ":" in text:
        rev, relative = text.split(":", 1)
        if not rev or not relative:
            raise UserInputError(f"{text}: expected GITREV:path (e.g. HEAD~1:hcp/default.toml)")
        return load_contract_at(workspace, rev, relative.removeprefix("./"), text)
    if NAME.match(text):
        path = workspace.contract_path(text)
        if path.is_file():
            loaded = _check_name(load_contract(path), text, str(path))
            return dataclasses.replace(loaded, ref=_pinned_ref(workspace, loaded))
        known = ", ".join(sorted(p.stem for p in workspace.hcp_dir.glob("*.toml"))) or "none"
        raise UserInputError(f"{text}: no contract {path} (contracts here: {known})")
    raise UserInputError(
        f"{text}: not a contract reference",
        hint="use a path, NAME, NAME@rN or GITREV:path",
    )
