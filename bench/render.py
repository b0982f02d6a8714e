"""Render bench/RESULTS.md from the committed result files (bench/results/*.json, written by bench/results.py).

    python bench/render.py           # rewrite every section that has a result file; mark the others historic
    python bench/render.py --check   # exit 1, naming the sections, if RESULTS.md differs from its rendering

A section with result files shows the newest finished one (`started`), rendered by `render_result(result)`
in the benchmark's own module (bench/<bench>.py, the file's `bench` key), under a header written from the
file alone: commit, tree, machine, load, seeds, command. A run on a dirty tree says so in that header and on
every table row. A section no result file names was typed before result files existed: it stays, marked once
under its heading, and is never rewritten. Running files (a benchmark still going, or killed) render nothing.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))  # `results` and the benchmark modules, as when a benchmark runs as a script

from results import RESULT_DIR, RESULTS, read  # noqa: E402

HISTORIC = "*(historic: typed before result files; not rendered)*"
DIRTY_ROW = " (dirty)"
Renderer = Callable[[dict[str, Any]], str]


class RenderError(Exception):
    """A result file that cannot be rendered: the message names the file and the key."""


def load_results(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every finished result file of this module's schema, oldest first (by start time, then name)."""
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = read(path)
        except ValueError as exc:
            raise RenderError(f"{path}: not JSON ({exc})") from exc
        if data is None or data.get("status") != "done":
            continue
        for key in ("bench", "section", "commit", "figures", "command"):
            if key not in data:
                raise RenderError(f"{path}: key '{key}' missing")
        found.append((path, data))
    return sorted(found, key=lambda item: (item[1].get("started") or "", item[0].name))


def renderer_of(bench: str) -> Renderer:
    try:
        module = importlib.import_module(bench)
    except ImportError as exc:
        raise RenderError(f"bench/{bench}.py: cannot import it to render its results ({exc})") from exc
    render = getattr(module, "render_result", None)
    if render is None:
        raise RenderError(f"bench/{bench}.py: no render_result(result) -> str")
    return render


def mark_dirty_rows(body: str) -> str:
    """Every data row of every table gets `(dirty)` after its first cell (header and rule rows do not)."""
    lines = body.split("\n")
    rule = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")
    out = []
    for i, line in enumerate(lines):
        is_header = i + 1 < len(lines) and rule.match(lines[i + 1]) is not None
        if line.startswith("|") and not rule.match(line) and not is_header:
            cells = line.split("|")
            if len(cells) > 2:
                cells[1] = cells[1].rstrip() + DIRTY_ROW + " "
                line = "|".join(cells)
        out.append(line)
    return "\n".join(out)


def _utc(stamp: str | None) -> str:
    return (stamp or "?").replace("T", " ").removesuffix("+00:00")


def header(path: Path, data: dict[str, Any], repo_relative: str) -> list[str]:
    """What the run was, from its file alone."""
    m, v = data.get("machine") or {}, data.get("versions") or {}
    loads = "; ".join(f"{name} {'/'.join(f'{x:.1f}' for x in data[key])}"
                      for name, key in (("start", "load_start"), ("end", "load_end")) if data.get(key))
    seeds = data.get("seeds")
    seed_text = ("none" if not seeds else f"{seeds[0]}-{seeds[-1]} ({len(seeds)})"
                 if seeds == list(range(seeds[0], seeds[0] + len(seeds))) else ", ".join(map(str, seeds)))
    lines = [f"*Rendered by `python bench/render.py` from `{repo_relative}`: edit the benchmark or rerun it, "
             "not this text.*", ""]
    if data.get("dirty"):
        changed = ", ".join(f"`{p}`" for p in data.get("dirty_paths") or []) or "paths not recorded"
        lines += [f"**DIRTY TREE**: run with `--allow-dirty` on {data['commit'][:12]} plus uncommitted changes to "
                  f"{changed}; every row is marked{DIRTY_ROW}.", ""]
    lines.append(
        f"Commit `{data['commit']}`{' (dirty)' if data.get('dirty') else ''}; {_utc(data.get('started'))} to "
        f"{_utc(data.get('finished'))} UTC; machine {m.get('hostname')} ({m.get('cores')} cores, {m.get('cpu')}, "
        f"{m.get('memory_gib')} GiB); load average 1/5/15 min at {loads}; Python {v.get('python')}"
        f"{', torch ' + v['torch'] if v.get('torch') else ''}; seeds {seed_text}.")
    for resume in data.get("resumes") or []:
        lines.append(f"Resumed {resume['at']} at commit `{resume['commit'][:12]}`"
                     f"{' (dirty)' if resume.get('dirty_paths') else ''}, load {resume['load'][0]:.1f}.")
    return lines


def render_section(path: Path, data: dict[str, Any], repo_relative: str, earlier: list[str]) -> str:
    try:
        body = renderer_of(data["bench"])(data).strip("\n")
    except RenderError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise RenderError(f"{path}: bench/{data['bench']}.py render_result failed on this file "
                          f"({type(exc).__name__}: {exc})") from exc
    if data.get("dirty"):
        body = mark_dirty_rows(body)
    cd = f"cd {data['cwd']} && " if data.get("cwd") not in (None, "", ".") else ""
    lines = [f"## {data['section']}", "", *header(path, data, repo_relative), "", body, "",
             f"Reproduce: `{cd}{data['command']}`"]
    if earlier:
        lines += ["", "Earlier result files of this section: " + ", ".join(f"`{e}`" for e in earlier) + "."]
    return "\n".join(lines)


def split_sections(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The text before the first `## ` heading, and (heading, whole section text) in order."""
    parts = re.split(r"(?m)^(?=## )", text)
    head, sections = parts[0], []
    for part in parts[1:]:
        sections.append((part.split("\n", 1)[0][3:].strip(), part))
    return head, sections


def mark_historic(section: str) -> str:
    if HISTORIC in section:
        return section
    heading, _, rest = section.partition("\n")
    return f"{heading}\n\n{HISTORIC}\n{rest if rest.startswith(chr(10)) else chr(10) + rest}"


def render_text(text: str, folder: Path, repo: Path) -> str:
    """RESULTS.md as it must read: rendered sections replaced or appended, the others marked historic."""
    by_section: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for path, data in load_results(folder):
        by_section.setdefault(data["section"], []).append((path, data))
    rendered = {}
    for section, files in by_section.items():
        path, data = files[-1]
        earlier = [p.relative_to(repo).as_posix() for p, _ in reversed(files[:-1])]
        rendered[section] = render_section(path, data, path.relative_to(repo).as_posix(), earlier)
    head, sections = split_sections(text)
    out = [head.rstrip("\n") + "\n\n"]
    for heading, section in sections:
        block = rendered.pop(heading, None)
        out.append(block.rstrip("\n") + "\n\n" if block is not None else mark_historic(section).rstrip("\n") + "\n\n")
    out += [block.rstrip("\n") + "\n\n" for block in rendered.values()]  # sections new to RESULTS.md
    return "".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="Exit 1 if RESULTS.md differs from its rendering.")
    parser.add_argument("--results-md", type=Path, default=RESULTS)
    parser.add_argument("--repo", type=Path, default=BENCH.parent, help="The repository whose bench/results to read.")
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    try:
        text = args.results_md.read_text(encoding="utf-8")
        wanted = render_text(text, repo / RESULT_DIR, repo)
    except (OSError, RenderError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if wanted == text:
        return 0
    if args.check:
        _, have = split_sections(text)
        _, want = split_sections(wanted)
        have_map = dict(have)
        differ = [h for h, s in want if have_map.get(h) != s] + [h for h, _ in have if h not in dict(want)]
        print(f"error: {args.results_md}: differs from the rendering of {RESULT_DIR} in "
              f"{', '.join(repr(h) for h in differ) or 'the text before the first section'}; "
              "run `python bench/render.py` (and never type a result)", file=sys.stderr)
        return 1
    args.results_md.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
