"""Benchmark result files: what a run was (commit, tree, machine, load, seeds, command) and what it measured.

Benchmarks run as scripts (`python bench/NAME.py`), so this module is imported as `results`.

    run = results.start("NAME", seeds=..., allow_dirty=args.allow_dirty, params=vars(args))
    ...                                   # the measurement
    results.finish(run, figures)          # figures: whatever NAME.render_result needs, JSON

`start` writes bench/results/NAME-<UTC date>-<short commit>[-dirty].json before any work, status "running",
so a run that dies still leaves its record; `finish` adds the figures, end time and load, status "done", by
writing a temporary file and renaming it over the record (a reader never sees half a file). A tree with
uncommitted changes is refused (exit 2, one line) unless `--allow-dirty`, and then the file, its name and
every row bench/render.py renders from it say "dirty". bench/RESULTS.md sections come from these files
(bench/render.py), never from text a benchmark or a person types: the record is what the run wrote.
bench/README.md says how to write a benchmark this way.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "RESULTS.md"
SCHEMA = "rsi-bench-result/1"  # files without it (another writer's) are not this module's and are left alone
RESULT_DIR = "bench/results"  # relative to the repository root; its own changes never make a tree dirty
IGNORED_UNTRACKED = ("runs/",)  # run outputs a benchmark may leave (also ignored by git)


@dataclass
class Result:
    """One result file: where it is and what it holds (the JSON object, as written)."""

    path: Path
    data: dict[str, Any]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags every converted benchmark takes."""
    parser.add_argument("--allow-dirty", action="store_true",
                        help="Run on a tree with uncommitted changes; the result file and its rows are marked dirty.")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def repo_root(start: Path = BENCH) -> Path:
    return Path(_git(start, "rev-parse", "--show-toplevel").strip())


def dirty_paths(repo: Path) -> list[str]:
    """Paths `git status` reports as changed, except the result files themselves and untracked run outputs."""
    out = _git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    entries = out.split("\0")
    paths: list[str] = []
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        if status[0] in "RC":  # a rename or copy: the next entry is its source path
            i += 1
        if path.startswith(RESULT_DIR + "/") or (status == "??" and path.startswith(IGNORED_UNTRACKED)):
            continue
        paths.append(path)
    return sorted(paths)


def machine() -> dict[str, Any]:
    """The host as far as it is cheap to read: name, CPU model, cores, memory."""
    cpu = platform.processor() or platform.machine()
    memory_gib = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = round(int(line.split()[1]) / 2**20, 1)
                break
    except OSError:  # not Linux: the platform module's words are what there is
        pass
    return {"hostname": platform.node(), "cpu": cpu, "arch": platform.machine(), "cores": os.cpu_count(),
            "memory_gib": memory_gib}


def load() -> list[float]:
    """1-, 5- and 15-minute load averages: on a shared machine, what the timings competed with."""
    return [round(x, 2) for x in os.getloadavg()]


def versions() -> dict[str, str | None]:
    """Python and torch, read from package metadata (importing torch would cost seconds)."""
    try:
        torch: str | None = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch = None
    return {"python": platform.python_version(), "torch": torch}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _write_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write `data` as JSON to a temporary file beside `path` and rename it over `path`: a reader (or a
    kill mid-write) sees the old record or the new one, never a truncated one."""
    text = json.dumps(data, indent=1, sort_keys=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a record is for reading
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read(path: Path) -> dict[str, Any] | None:
    """A result file's object, or None if the file is another writer's (no `schema`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA else None


def _refuse(line: str) -> None:
    print(f"error: {line}", file=sys.stderr)
    raise SystemExit(2)


def _reopen(folder: Path, name: str, command: str, cwd: str, dirty: bool) -> Result | None:
    """The newest result file of `name` still running the same command from the same place (a run that
    was killed), so a resumed benchmark continues its record instead of starting a second one."""
    found = []
    for path in folder.glob(f"{name}-*.json"):
        try:
            data = read(path)
        except (OSError, ValueError):
            continue
        if (data and data.get("bench") == name and data.get("status") == "running" and data.get("command") == command
                and data.get("cwd") == cwd and data.get("dirty") == dirty):
            found.append(Result(path, data))
    return max(found, key=lambda r: (r.data.get("started", ""), r.path.name), default=None)


def _free_path(folder: Path, stem: str) -> Path:
    path, n = folder / f"{stem}.json", 2
    while path.exists():  # the same benchmark twice a day on one commit (other arguments)
        path, n = folder / f"{stem}-{n}.json", n + 1
    return path


def start(name: str, *, seeds: list[int] | range | None = None, argv: list[str] | None = None,
          allow_dirty: bool = False, section: str | None = None, params: dict[str, Any] | None = None,
          repo: Path | None = None) -> Result:
    """Write (or reopen) this run's result file before any work; refuse a dirty tree unless allowed.

    `section` is the bench/RESULTS.md heading (without `## `) rendered from this file (default: `name`);
    `params` are the run's settings as the benchmark parsed them (rendering may read them)."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        _refuse(f"result name {name!r}: letters, digits, '_', '.' and '-' only (it names a file)")
    try:
        repo = repo or repo_root()
        commit = _git(repo, "rev-parse", "HEAD").strip()
        short = _git(repo, "rev-parse", "--short", "HEAD").strip()
        changed = dirty_paths(repo)
    except (OSError, subprocess.CalledProcessError) as exc:
        _refuse(f"{repo or BENCH}: a result file records its commit, and git could not give one ({exc})")
        raise  # unreachable: _refuse exits
    if changed and not allow_dirty:
        listed = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        _refuse(f"{repo}: uncommitted changes ({listed}); commit them, or pass --allow-dirty to record a run "
                "marked dirty")
    argv = list(sys.argv if argv is None else argv)
    command = shlex.join(["python", *argv])
    here = Path.cwd().resolve()
    cwd = here.relative_to(repo).as_posix() if here.is_relative_to(repo) else here.as_posix()
    dirty = bool(changed)
    folder = repo / RESULT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    at = {"at": _now(), "commit": commit, "dirty_paths": changed, "load": load()}
    found = _reopen(folder, name, command, cwd, dirty)
    if found is not None:
        found.data.setdefault("resumes", []).append(at)
        _write_atomic(found.path, found.data)
        return found
    data: dict[str, Any] = {
        "schema": SCHEMA, "bench": name, "section": section or name, "status": "running",
        "commit": commit, "short_commit": short, "dirty": dirty, "dirty_paths": changed,
        "started": at["at"], "finished": None, "machine": machine(), "versions": versions(),
        "load_start": at["load"], "load_end": None,
        "seeds": list(seeds) if seeds is not None else None,
        "command": command, "cwd": cwd, "params": {k: _jsonable(v) for k, v in (params or {}).items()},
        "figures": None,
    }
    stem = f"{name}-{datetime.now(UTC):%Y-%m-%d}-{short}{'-dirty' if dirty else ''}"
    result = Result(_free_path(folder, stem), data)
    _write_atomic(result.path, data)
    return result


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)  # paths and the like: their text


def finish(result: Result, figures: dict[str, Any]) -> Result:
    """Add the run's figures, end time and load; status "done". Atomic (see `_write_atomic`)."""
    data = {**result.data, "figures": figures, "finished": _now(), "load_end": load(), "status": "done"}
    _write_atomic(result.path, data)
    result.data = data
    return result


def render_now() -> None:
    """Re-render bench/RESULTS.md from the result files (what `--write` flags call after `finish`)."""
    subprocess.run([sys.executable, str(BENCH / "render.py")], check=True)


def replace_section(heading: str, block: str, path: Path | None = None) -> None:
    """The older way, kept for the benchmarks not yet converted: put `block` (the whole section, starting
    with `heading`) in place of that section, or append it. bench/render.py --check fails on a section
    written this way that has no result file and no historic mark: convert the benchmark instead."""
    path = path or RESULTS
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    block = block.rstrip("\n") + "\n\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", flags=re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _match: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
