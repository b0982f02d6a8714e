"""Git access for contracts (GitPython): open the workspace repository, read files at a revision,
name revision tags, and format/parse the structured commit messages revisions carry.

Everything that touches `.git` for contracts goes through here or through revisions.py.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rsi.errors import RevisionError, UserInputError
from rsi.workspace import Workspace

if TYPE_CHECKING:
    import git

TRAILER_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*): (.*)$")
RESERVED_TRAILERS = ("HCP-Name", "HCP-Revision", "HCP-Parent", "HCP-Hash", "HCP-Clocks")


def open_repo(workspace: Workspace) -> git.Repo:
    """The git repository holding the workspace (the workspace may be a sub-folder of it)."""
    import git

    try:
        return git.Repo(workspace.root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise RevisionError(
            f"{workspace.root}: the workspace is not inside a git repository",
            hint="contract revisions live in git: run `git init` there (or create the workspace with `rsi init`)",
        ) from None


def repo_path(repo: git.Repo, path: Path) -> str:
    """`path` relative to the repository root, in posix form (what git trees are indexed by)."""
    root = Path(repo.working_tree_dir or ".").resolve()
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        raise UserInputError(f"{path}: outside the git repository at {root}") from None


def read_at(repo: git.Repo, rev: str, relative: str) -> str | None:
    """Text of `relative` (repo-relative posix path) at `rev`, or None when it is not there."""
    commit = resolve_commit(repo, rev)
    try:
        blob = commit.tree / relative
    except KeyError:
        return None
    if blob.type != "blob":
        return None
    return blob.data_stream.read().decode("utf-8")


def resolve_commit(repo: git.Repo, rev: str) -> git.Commit:
    import git

    try:
        return repo.commit(rev)
    except (git.BadName, git.BadObject, ValueError):
        raise UserInputError(f"{rev}: no such git revision", hint="use a commit, branch or tag name") from None


@dataclass(frozen=True)
class GitReader:
    """Files referenced by a contract, read as they were at one commit."""

    repo: git.Repo
    commit: str
    folder: str  # repo-relative posix folder of the contract

    def _path(self, relative: str) -> str:
        return posixpath.normpath(posixpath.join(self.folder, relative))

    def read(self, relative: str) -> str | None:
        return read_at(self.repo, self.commit, self._path(relative))

    def where(self, relative: str) -> str:
        return f"{self.commit[:12]}:{self._path(relative)}"


def tag_name(name: str, revision: int) -> str:
    return f"hcp/{name}/r{revision}"


def revision_tags(repo: git.Repo, name: str) -> dict[int, git.TagReference]:
    """Revision number -> tag, for the tags `hcp/<name>/r<N>`."""
    found = {}
    pattern = re.compile(rf"^hcp/{re.escape(name)}/r(\d+)$")
    for tag in repo.tags:
        match = pattern.match(tag.name)
        if match:
            found[int(match.group(1))] = tag
    return found


def format_commit_message(subject: str, body: str, trailers: list[tuple[str, str]]) -> str:
    parts = [subject.strip()]
    if body.strip():
        parts.append(body.strip())
    parts.append("\n".join(f"{key}: {value}" for key, value in trailers))
    return "\n\n".join(parts) + "\n"


def parse_commit_message(message: str) -> tuple[str, str, dict[str, str]]:
    """(subject, body, trailers) of a commit message; trailers are the last paragraph if all `Key: value`."""
    paragraphs = [p for p in re.split(r"\n\s*\n", message.strip()) if p.strip()]
    if not paragraphs:
        return "", "", {}
    subject_lines = paragraphs[0].splitlines()
    subject = subject_lines[0]
    rest = paragraphs[1:]
    if len(subject_lines) > 1:
        rest = ["\n".join(subject_lines[1:]), *rest]
    trailers: dict[str, str] = {}
    if rest:
        lines = rest[-1].splitlines()
        matches = [TRAILER_LINE.match(line) for line in lines]
        if lines and all(matches):
            trailers = {m.group(1): m.group(2) for m in matches if m}
            rest = rest[:-1]
    return subject, "\n\n".join(rest), trailers


def find_trailer_commit(workspace: Workspace, name: str, trailer: str, value: str) -> tuple[str, int] | None:
    """(commit, revision) of the newest commit of contract `name` whose message carries `trailer: value`, if
    any: how a rerun of a revision writer (promotion, adapter registration) finds what it already wrote."""
    repo = open_repo(workspace)
    try:
        relative = repo_path(repo, workspace.contract_path(name))
        try:
            commits = list(repo.iter_commits(paths=relative))
        except Exception:  # an empty repository has no HEAD to walk from
            return None
        for commit in commits:
            _, _, trailers = parse_commit_message(str(commit.message))
            if trailers.get(trailer) == value and trailers.get("HCP-Name") == name:
                return commit.hexsha, int(trailers.get("HCP-Revision", "0") or 0)
        return None
    finally:
        repo.close()


def check_trailers(trailers: dict[str, str] | None) -> list[tuple[str, str]]:
    """Extra evidence trailers as (key, one-line value); refuses reserved or malformed keys."""
    checked = []
    for key, value in (trailers or {}).items():
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", key):
            raise UserInputError(f"trailer {key!r}: keys are letters, digits and '-' (e.g. Evidence-Run)")
        if key in RESERVED_TRAILERS:
            raise UserInputError(f"trailer {key!r} is written by rsi itself; pick another name")
        checked.append((key, " ".join(str(value).split())))
    return checked
