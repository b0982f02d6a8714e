"""Contract revisions in git: write the next revision of hcp/<name>.toml, commit it alone, tag it.

`revise_contract` is what `rsi hcp revise` and promotion call. One revision is:

1. refuse unless the contract file is committed and clean (no staged or unstaged edits);
2. edit the TOML with tomlkit (comments and formatting survive), apply the `--set` values;
3. validate; find which release clocks moved; bump `base.version` / `harness.version` for a moved
   clock unless the caller set it; bump `hcp.revision`, set `hcp.parent` and `hcp.created` (UTC);
4. record a journal entry in `.git/rsi/revise-<name>.json` (never tracked);
5. write atomically: a temp file in the same folder, fsync, `os.replace` — the contract is either
   the old text or the new text, never half of one;
6. commit only that file (`git commit --only`) with a structured message and trailers
   (HCP-Name, HCP-Revision, HCP-Parent, HCP-Hash, HCP-Clocks, then any evidence trailers);
7. tag the commit `hcp/<name>/r<N>` (annotated), then drop the journal.

Crash safety. A crash before step 5 leaves the old contract (and maybe a stray temp file, removed by
the next run). A crash between 5 and 6 leaves the new revision written but uncommitted, with the
journal naming its exact digest: the next `revise_contract` on that contract commits and tags it
with the recorded message first (if the rerun asks for the same change, that recovered revision is
the answer, so a retried command does not create two revisions). If the file was edited after the
crash, the digest no longer matches and revise refuses it as dirty. A crash between 6 and 7 leaves
an untagged commit; the next run tags the commit that last touched the file.

Exit codes: a dirty, untracked or unknown contract raises RevisionError/UserInputError; bad keys
or values raise UserInputError/ContractError (exit 2); git failures raise RevisionError (exit 1).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsi.atomic import write_text_atomic
from rsi.contracts.gitio import (
    GitReader,
    check_trailers,
    format_commit_message,
    open_repo,
    parse_commit_message,
    read_at,
    repo_path,
    revision_tags,
    tag_name,
)
from rsi.contracts.hashing import clocks_moved
from rsi.contracts.load import (
    FileReader,
    LoadedContract,
    load_contract,
    load_contract_text,
    with_prompt_source,
)
from rsi.contracts.overrides import OverrideError, check_override_key
from rsi.errors import RevisionError, UserInputError
from rsi.workspace import Workspace

if TYPE_CHECKING:
    import git

MANAGED_KEYS = {"hcp.revision", "hcp.parent", "hcp.created", "hcp.name", "schema_version"}


@dataclass(frozen=True)
class RevisionOutcome:
    """A revision written, committed and tagged."""

    name: str
    revision: int
    parent: int
    commit: str
    tag: str
    content_hash: str
    clocks_moved: list[str]
    path: Path
    recovered: bool = False
    tagged: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RevisionEntry:
    """One revision in a contract's history (for `rsi hcp log`)."""

    revision: int
    parent: int
    commit: str
    tag: str | None
    date: datetime
    clocks_moved: list[str]
    content_hash: str
    message: str
    trailers: dict[str, str]


# --- journal -----------------------------------------------------------------------------------


def _journal_path(repo: git.Repo, name: str) -> Path:
    return Path(repo.git_dir) / "rsi" / f"revise-{name}.json"


def _write_atomic(path: Path, text: str) -> None:
    """The one write of a contract (a named seam: crash tests interrupt it)."""
    write_text_atomic(path, text)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _remove_stray_temps(path: Path) -> None:
    for stray in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            stray.unlink()


# --- git state ---------------------------------------------------------------------------------


def _committed(repo: git.Repo, relative: str) -> bool:
    try:
        repo.head.commit.tree / relative  # noqa: B018 - raises KeyError when absent
    except (KeyError, ValueError):
        return False
    return True


def _dirty(repo: git.Repo, relative: str) -> bool:
    return bool(repo.git.status("--porcelain", "--untracked-files=all", "--", relative).strip())


def _commit_only(repo: git.Repo, relative: str, message: str, companions: tuple[str, ...] = ()) -> str:
    """Commit exactly these paths, whatever else is staged (`git commit --only`); `companions` are files
    the revision reads that git may not hold yet (added first: `--only` commits tracked paths only)."""
    import git

    try:
        if companions:
            repo.git.add("--", *companions)
        repo.git.commit("--only", "--no-verify", "-m", message, "--", relative, *companions)
    except git.GitCommandError as error:
        raise RevisionError(f"git commit of {relative} failed: {error.stderr.strip() or error}") from None
    return repo.head.commit.hexsha


def _companions(repo: git.Repo, path: Path, text: str) -> tuple[str, ...]:
    """The learned router file a revision's text names, where it exists: a revision read back from git
    (`NAME@rN`, an evaluation's sides) must find its router in its own commit (before, a revision that set
    `routing.router` to a freshly fitted file failed to load at rN). One git already holds unchanged is a
    no-op in the commit."""
    import tomllib

    router = str(tomllib.loads(text).get("routing", {}).get("router", "") or "")
    file = path.parent / router
    return (repo_path(repo, file),) if router and file.is_file() else ()


def _tag(repo: git.Repo, name: str, revision: int, commit: str) -> str:
    tag = tag_name(name, revision)
    repo.create_tag(tag, ref=commit, message=f"HCP contract {name} revision {revision}")
    return tag


def _head_revision(repo: git.Repo, relative: str) -> int | None:
    text = read_at(repo, "HEAD", relative)
    try:
        revision = tomllib.loads(text or "").get("hcp", {}).get("revision")
    except tomllib.TOMLDecodeError:
        return None
    return revision if isinstance(revision, int) else None


def _ensure_head_tagged(repo: git.Repo, name: str, relative: str) -> list[str]:
    """Tag the committed revision if its tag is missing (first revision, or a crash before tagging)."""
    revision = _head_revision(repo, relative)
    if revision is None or revision in revision_tags(repo, name):
        return []
    last = next(repo.iter_commits(paths=relative, max_count=1), None)
    if last is None:
        return []
    return [_tag(repo, name, revision, last.hexsha)]


def _recover(repo: git.Repo, path: Path, relative: str, name: str) -> tuple[dict[str, Any] | None, RevisionOutcome | None]:
    """Finish or discard what an interrupted revise left. Returns (journal, recovered outcome)."""
    journal_file = _journal_path(repo, name)
    if not journal_file.exists():
        _remove_stray_temps(path)
        return None, None
    try:
        journal = json.loads(journal_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        journal_file.unlink(missing_ok=True)
        return None, None
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    _remove_stray_temps(path)
    if _digest(current) != journal["digest"]:
        if _dirty(repo, relative):
            raise RevisionError(
                f"{relative}: has uncommitted edits, and an interrupted revise of r{journal['revision']} "
                "was pending; the file no longer matches it",
                hint=f"inspect `git diff -- {relative}`, then commit or discard the edits",
            )
        journal_file.unlink(missing_ok=True)  # crashed before the rename: nothing was written
        return None, None
    tagged: list[str] = []
    if _dirty(repo, relative):  # crashed between rename and commit: commit it as recorded
        commit = _commit_only(repo, relative, journal["commit_message"])
    else:  # crashed after the commit: it is the last commit touching the file
        last = next(repo.iter_commits(paths=relative, max_count=1))
        commit = last.hexsha
    tags = revision_tags(repo, name)
    if journal["revision"] not in tags:
        tagged.append(_tag(repo, name, journal["revision"], commit))
    journal_file.unlink(missing_ok=True)
    outcome = RevisionOutcome(
        name=name,
        revision=journal["revision"],
        parent=journal["parent"],
        commit=commit,
        tag=tag_name(name, journal["revision"]),
        content_hash=journal["content_hash"],
        clocks_moved=list(journal["clocks"]),
        path=path,
        recovered=True,
        tagged=tagged,
    )
    return journal, outcome


# --- editing -----------------------------------------------------------------------------------


def _set_in_document(document: Any, path: tuple[str | int, ...], value: Any) -> None:
    import tomlkit

    node = document
    for depth, part in enumerate(path[:-1]):
        if isinstance(part, int):
            node = node[part]
            continue
        if part not in node:
            following = path[depth + 1]
            node[part] = tomlkit.aot() if isinstance(following, int) else tomlkit.table()
        node = node[part]
    last = path[-1]
    if value == "" and last in ("system_prompt", "system_prompt_file"):
        if last in node:
            del node[last]  # clearing a prompt source removes the key instead of writing ""
        return
    if isinstance(last, str) and last in node and isinstance(value, dict) and hasattr(node[last], "items"):
        for key, item in value.items():
            _set_in_document(node[last], (key,), item)
        return
    node[last] = value


def _apply_sets(document: Any, sets: dict[str, Any]) -> None:
    problems: list[tuple[str, str]] = []
    for key, value in with_prompt_source(sets).items():
        path, problem = check_override_key(key)
        if path is None:
            problems.append((key, problem or "invalid key"))
            continue
        if key.replace(" ", "") in MANAGED_KEYS:
            problems.append((key, "is managed by `rsi hcp revise` and cannot be set"))
            continue
        if key in sets or _has_path(document, path):
            try:
                _set_in_document(document, path, value)
            except (KeyError, IndexError, TypeError) as error:
                problems.append((key, f"cannot set: {error}"))
    if problems:
        raise OverrideError(problems)


def _has_path(document: Any, path: tuple[str | int, ...]) -> bool:
    node = document
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    return True


def _set_version(document: Any, section: str, version: int) -> None:
    import tomlkit

    if section not in document:
        document[section] = tomlkit.table()
    document[section]["version"] = version


def _load_candidate(text: str, path: Path, relative: str) -> LoadedContract:
    return load_contract_text(text, path, relative, FileReader(path.parent.resolve()), file_label=f"{relative} (revised)")


def revise_contract(
    workspace: Workspace,
    name: str,
    sets: dict[str, Any],
    message: str,
    trailers: dict[str, str] | None = None,
    now: datetime | None = None,
    lock_timeout_s: float = 60.0,
) -> RevisionOutcome:
    """Write, commit and tag the next revision of hcp/<name>.toml (see the module docstring).

    Serialized per repository by a file lock, so two promotions racing on one workspace take turns
    instead of colliding on git's index lock or both claiming revision N+1.
    """
    from filelock import FileLock, Timeout

    repo = open_repo(workspace)
    lock_path = Path(repo.git_dir) / "rsi" / "revise.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(lock_path), timeout=lock_timeout_s):
            return _revise_locked(workspace, name, sets, message, trailers, now)
    except Timeout:
        raise RevisionError(
            f"another revise holds {lock_path} for more than {lock_timeout_s:.0f} s",
            hint="wait for it to finish; if no rsi process is running, the lock is stale and safe to delete",
        ) from None


@dataclass(frozen=True)
class RevisionPlan:
    """The next revision, decided but not written: what `_commit_revision` writes, commits and tags."""

    name: str
    revision: int
    parent: int
    text: str
    content_hash: str
    clocks_moved: list[str]
    commit_message: str
    request: str


def _revise_locked(
    workspace: Workspace,
    name: str,
    sets: dict[str, Any],
    message: str,
    trailers: dict[str, str] | None,
    now: datetime | None,
) -> RevisionOutcome:
    if not message.strip():
        raise UserInputError("a revision needs a message (-m) saying why it exists")
    if not sets:
        raise UserInputError("nothing to revise: give at least one KEY=VALUE (--set)")
    extra = check_trailers(trailers)
    path = workspace.contract_path(name)
    if not path.is_file():
        raise UserInputError(f"{name}: no contract {path}")
    repo = open_repo(workspace)
    relative = repo_path(repo, path)
    journal, recovered = _recover(repo, path, relative, name)
    if recovered is not None and journal is not None and journal.get("request") == _request(sets, message, extra):
        return recovered
    _require_clean(repo, relative)
    plan = plan_revision(path, relative, name, sets, message, extra, now)
    return _commit_revision(repo, path, relative, plan, list(recovered.tagged if recovered else []))


def _require_clean(repo: git.Repo, relative: str) -> None:
    """A revision builds only on a committed, unedited contract (its parent must be on record)."""
    if not _committed(repo, relative):
        raise RevisionError(
            f"{relative}: not committed to git", hint=f"commit it first: git add {relative} && git commit"
        )
    if _dirty(repo, relative):
        raise RevisionError(
            f"{relative}: has uncommitted edits; revise refuses to build on an unrecorded state",
            hint=f"commit or discard them first (see `git diff -- {relative}`)",
        )


def plan_revision(
    path: Path,
    relative: str,
    name: str,
    sets: dict[str, Any],
    message: str,
    extra: list[tuple[str, str]],
    now: datetime | None,
) -> RevisionPlan:
    """The next revision of the contract at `path` with `sets` applied: its text (clock versions bumped
    where a clock moved), hash and commit message. Reads the contract's files; touches no git state."""
    import tomlkit

    old_text = path.read_text(encoding="utf-8")
    old = load_contract(path)
    if old.name != name:
        raise UserInputError(f"{relative}: hcp.name is '{old.name}', not '{name}'")
    document = tomlkit.parse(old_text)
    _apply_sets(document, sets)
    if tomlkit.dumps(document) == old_text:
        raise UserInputError(f"nothing to revise: {name} already has those values")
    candidate = _load_candidate(tomlkit.dumps(document), path, relative)
    moved = clocks_moved(old.clock_hashes, candidate.clock_hashes)
    if "base" in moved and candidate.spec.base.version == old.spec.base.version:
        _set_version(document, "base", old.spec.base.version + 1)
    if "harness" in moved and candidate.spec.harness.version == old.spec.harness.version:
        _set_version(document, "harness", old.spec.harness.version + 1)
    revision = old.revision + 1
    document["hcp"]["revision"] = revision
    document["hcp"]["parent"] = old.revision
    document["hcp"]["created"] = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    new_text = tomlkit.dumps(document)
    final = _load_candidate(new_text, path, relative)
    summary, _, body = message.strip().partition("\n")
    commit_message = format_commit_message(
        f"hcp({name}): r{revision}: {summary.strip()}",
        body,
        [
            ("HCP-Name", name),
            ("HCP-Revision", str(revision)),
            ("HCP-Parent", str(old.revision)),
            ("HCP-Hash", final.content_hash),
            ("HCP-Clocks", ",".join(moved) or "none"),
            *extra,
        ],
    )
    return RevisionPlan(name, revision, old.revision, new_text, final.content_hash, moved, commit_message,
                        _request(sets, message, extra))


def _commit_revision(repo: git.Repo, path: Path, relative: str, plan: RevisionPlan, tagged: list[str]) -> RevisionOutcome:
    """Write `plan` under a journal, commit only the contract, tag it (`_recover` finishes a crash)."""
    name, revision = plan.name, plan.revision
    tag = tag_name(name, revision)
    if revision in revision_tags(repo, name):
        raise RevisionError(
            f"tag {tag} already exists but {relative} at HEAD is r{plan.parent}",
            hint="the contract's history diverged from its tags; inspect `git log -- " + relative + "`",
        )
    # Only now, with the new revision known valid, tag the committed one if it lacks its tag.
    tagged = tagged + _ensure_head_tagged(repo, name, relative)
    journal_file = _journal_path(repo, name)
    journal_file.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(
        journal_file,
        json.dumps(
            {
                "revision": revision,
                "parent": plan.parent,
                "digest": _digest(plan.text),
                "content_hash": plan.content_hash,
                "clocks": plan.clocks_moved,
                "commit_message": plan.commit_message,
                "request": plan.request,
            }
        ),
    )
    _write_atomic(path, plan.text)
    commit = _commit_only(repo, relative, plan.commit_message, _companions(repo, path, plan.text))
    tagged.append(_tag(repo, name, revision, commit))
    journal_file.unlink(missing_ok=True)
    return RevisionOutcome(
        name=name,
        revision=revision,
        parent=plan.parent,
        commit=commit,
        tag=tag,
        content_hash=plan.content_hash,
        clocks_moved=plan.clocks_moved,
        path=path,
        tagged=tagged,
    )


def _request(sets: dict[str, Any], message: str, extra: list[tuple[str, str]]) -> str:
    """A comparable fingerprint of one revise request (to recognise a retried command)."""
    return json.dumps({"sets": sets, "message": message.strip(), "trailers": extra}, sort_keys=True, default=str)


# --- history -----------------------------------------------------------------------------------


def revision_log(workspace: Workspace, name: str) -> list[RevisionEntry]:
    """Every revision of hcp/<name>.toml in HEAD's history, oldest first.

    A revision is the commit its tag points at, or (untagged) the last commit holding that revision
    number. Clocks moved come from the HCP-Clocks trailer, else from comparing clock hashes with
    the previous revision.
    """
    from rsi.errors import RsiError

    repo = open_repo(workspace)
    path = workspace.contract_path(name)
    relative = repo_path(repo, path)
    if not path.is_file() and not _committed(repo, relative):
        raise UserInputError(f"{name}: no contract {path}, and none in git history at HEAD")
    tags = revision_tags(repo, name)
    tagged_commits = {tag.commit.hexsha: number for number, tag in tags.items()}
    chosen: dict[int, tuple[git.Commit, LoadedContract]] = {}
    for commit in reversed(list(repo.iter_commits(paths=relative))):
        text = read_at(repo, commit.hexsha, relative)
        if text is None:
            continue
        try:
            loaded = load_contract_text(
                text, path, f"{commit.hexsha[:12]}:{relative}", GitReader(repo, commit.hexsha, os.path.dirname(relative))
            )
        except RsiError:
            continue  # a commit holding an invalid contract is not a revision
        number = loaded.revision
        if number in chosen and tagged_commits.get(chosen[number][0].hexsha) == number:
            continue  # the tagged commit is the revision; later edits without a bump are not
        chosen[number] = (commit, loaded)
    entries: list[RevisionEntry] = []
    previous: LoadedContract | None = None
    for number in sorted(chosen):
        commit, loaded = chosen[number]
        subject, body, trailers = parse_commit_message(str(commit.message))
        prefix = f"hcp({name}): r{number}: "
        summary = subject.removeprefix(prefix)
        if "HCP-Clocks" in trailers:
            moved = [c for c in trailers["HCP-Clocks"].split(",") if c and c != "none"]
        elif previous is not None:
            moved = clocks_moved(previous.clock_hashes, loaded.clock_hashes)
        else:
            moved = []
        entries.append(
            RevisionEntry(
                revision=number,
                parent=loaded.spec.hcp.parent,
                commit=commit.hexsha,
                tag=tags[number].name if number in tags else None,
                date=commit.committed_datetime.astimezone(UTC),
                clocks_moved=moved,
                content_hash=loaded.content_hash,
                message=summary + (f"\n\n{body}" if body else ""),
                trailers=trailers,
            )
        )
        previous = loaded
    return entries
