"""Transcripts for the report's trajectory viewer: read trajectory files, pack them into lazy pages.

`transcript_from` turns one parsed trajectory document into a `Transcript` (pure, tolerant: a field
a later schema adds is ignored, a missing one left empty), `read_transcripts` is the file edge, and
`pack_pages` groups transcripts into pages of JSON the page parses only when one is opened.

Size: a 10,000-attempt run carries tens of megabytes of transcripts. Long texts that repeat (the
system prompt, each task's instruction) are stored once in a shared string table, and above a size
threshold every page is gzip-compressed (the browser inflates it with DecompressionStream), so the
file stays small enough to open in a second or two.

A verifier that scores layers and keeps a screenshot (the ui kind: `outcome.layer_scores`,
`outcome.artifacts["screenshot"]`, a path relative to the attempt folder) has both shown by the viewer:
the scores as a small table, the PNG embedded as a data URI (the page's Content-Security-Policy allows
images from data: only; the report stays one self-contained file). Only a regular PNG file inside the
attempt folder and under SCREENSHOT_MAX_BYTES is embedded; otherwise the viewer says why not.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi.report.records import AttemptLine, StepView, Transcript

PAGE_SIZE = 50
INTERN_MIN_CHARS = 160
COMPRESS_OVER_BYTES = 2_000_000
SCREENSHOT_MAX_BYTES = 400_000
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) else 0


def check_text(raw: Any) -> str:
    """A step's public-check record in words: 'submitted · 1/2 passed' and one line per example."""
    if not isinstance(raw, dict):
        return ""
    head = ("submitted · " if raw.get("selected") else "") + f"{_int(raw.get('passed'))}/{_int(raw.get('total'))} passed"
    lines = [head + (f" · {raw['note']}" if raw.get("note") else "")]
    for example in raw.get("examples") or []:
        if isinstance(example, dict):
            outcome = f"raised {example.get('error')}" if example.get("error") else f"returned {example.get('got', '')}"
            lines.append(f"{'ok  ' if example.get('passed') else 'FAIL'} {example.get('call', '')} {outcome}, "
                         f"expected {example.get('expected', '')}")
    if raw.get("script_exit") is not None:
        lines.append(f"{'ok  ' if raw.get('script_exit') == 0 else 'FAIL'} public script exited {raw.get('script_exit')}")
    return "\n".join(lines)


def _step(raw: dict[str, Any]) -> StepView:
    routing = raw.get("routing") or {}
    execution = raw.get("execution") or {}
    metrics = raw.get("metrics") or {}
    return StepView(
        source=str(raw.get("source", "")), turn=raw.get("turn"), message=str(raw.get("message") or ""),
        code=raw.get("code"), observation=raw.get("observation"), specialist=routing.get("specialist"),
        route_reason=str(routing.get("reason", "")), error=bool(execution.get("error", False)),
        timed_out=bool(execution.get("timed_out", False)), check=check_text(raw.get("check")),
        tokens=_int(metrics.get("prompt_tokens")) + _int(metrics.get("completion_tokens")),
        latency_s=float(metrics.get("latency_s") or 0.0),
    )


def _scores(raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        return {}
    return {str(k): float(v) for k, v in raw.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def screenshot_uri(artifacts: Any, folder: Path | None) -> tuple[str, str]:
    """(data URI, '') of the outcome's screenshot inside the attempt `folder`, or ('', why not); ('', '') when none."""
    name = artifacts.get("screenshot") if isinstance(artifacts, dict) else None
    if not isinstance(name, str) or not name:
        return "", ""
    if folder is None:
        return "", "screenshot not embedded: the attempt folder is unknown"
    path = folder / name
    try:
        inside = path.resolve().is_relative_to(folder.resolve())
        if not inside or path.is_symlink() or not path.is_file():
            return "", f"screenshot not found in the attempt folder: {name}"
        if path.stat().st_size > SCREENSHOT_MAX_BYTES:
            return "", f"screenshot not embedded: {path.stat().st_size} bytes (over {SCREENSHOT_MAX_BYTES}): {path}"
        data = path.read_bytes()
    except OSError as error:
        return "", f"screenshot unreadable: {error}"
    if not data.startswith(PNG_MAGIC):
        return "", f"screenshot is not a PNG file: {name}"
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii"), ""


def transcript_from(raw: dict[str, Any], n: int, folder: Path | None = None) -> Transcript:
    """The viewer's transcript of one trajectory document (rsi-trajectory/1 or a later superset); `folder`
    is the attempt folder its kept files are named relative to (its screenshot is embedded from there)."""
    outcome = raw.get("outcome") or {}
    totals = raw.get("final_metrics") or {}
    screenshot, screenshot_note = screenshot_uri(outcome.get("artifacts"), folder)
    return Transcript(
        n=n, attempt_id=str(raw.get("attempt_id", "")), model=str((raw.get("model") or {}).get("name", "")),
        seed=_int(raw.get("seed")), sandbox=dict(raw.get("sandbox") or {}),
        steps=[_step(s) for s in raw.get("steps") or [] if isinstance(s, dict)],
        final_code=outcome.get("final_code"), solution_file=str((raw.get("task") or {}).get("solution_file", "")),
        verdict=str(outcome.get("verdict", "")), reason=str(outcome.get("reason", "")),
        ended_by=str(outcome.get("ended_by", "")), verifier_wall_s=float(outcome.get("verifier_wall_s") or 0.0),
        prompt_tokens=_int(totals.get("prompt_tokens")), completion_tokens=_int(totals.get("completion_tokens")),
        turns=_int(totals.get("turns")), wall_s=float(totals.get("wall_s") or 0.0),
        tools_saved=[str(t.get("name", "")) for t in raw.get("tools_saved") or [] if isinstance(t, dict)],
        layer_scores=_scores(outcome.get("layer_scores")), screenshot=screenshot, screenshot_note=screenshot_note,
    )


def read_transcripts(lines: Sequence[AttemptLine], root: Path | None = None) -> list[Transcript]:
    """Read each attempt's trajectory file; an unreadable one becomes a transcript naming the problem."""
    out = []
    from rsi.harness.trajectory import stored_trajectory_path

    for line in lines:
        path = stored_trajectory_path(line.trajectory_path, root)
        if path is None:
            continue
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(raw, dict):
                raise ValueError("not a JSON object")
            out.append(transcript_from(raw, line.n, path.parent))
        except (OSError, ValueError) as error:
            out.append(Transcript(n=line.n, problem=f"{path}: {type(error).__name__}: {error}"))
    return out


@dataclass
class TranscriptPages:
    """The transcripts as the page embeds them: a string table and pages of attempt number -> transcript."""

    strings: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list, repr=False)
    page_of: dict[int, int] = field(default_factory=dict)
    compressed: bool = False
    raw_bytes: int = 0


def _interned(transcripts: Sequence[Transcript]) -> dict[str, int]:
    """Long texts seen more than once (system prompts, task instructions) -> their index in the table."""
    counts: Counter[str] = Counter(
        step.message for t in transcripts for step in t.steps if len(step.message) >= INTERN_MIN_CHARS
    )
    return {text: i for i, text in enumerate(t for t, c in counts.items() if c > 1)}


def embed_json(value: Any) -> str:
    """JSON safe inside <script>: no `</script>` can close the element, no `://` reads as a link."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("://", ":\\/\\/")


def _compact(t: Transcript, table: dict[str, int]) -> dict[str, Any]:
    data = t.model_dump(exclude_defaults=True)
    steps = []
    for step, dumped in zip(t.steps, data.get("steps", []), strict=False):
        if step.message in table:
            dumped["message"] = table[step.message]  # an int: the viewer reads strings[i]
        steps.append(dumped)
    if steps:
        data["steps"] = steps
    return data


def pack_pages(transcripts: Iterable[Transcript], page_size: int = PAGE_SIZE,
               compress_over_bytes: int = COMPRESS_OVER_BYTES) -> TranscriptPages:
    """Group transcripts into pages of `page_size` attempts; compress every page above the threshold."""
    items = sorted(transcripts, key=lambda t: t.n)
    table = _interned(items)
    packed = TranscriptPages(strings=list(table))
    for start in range(0, len(items), page_size):
        chunk = items[start:start + page_size]
        packed.pages.append(embed_json({str(t.n): _compact(t, table) for t in chunk}))
        for t in chunk:
            packed.page_of[t.n] = len(packed.pages) - 1
    packed.raw_bytes = sum(len(p.encode("utf-8")) for p in packed.pages)
    if packed.raw_bytes > compress_over_bytes:
        packed.compressed = True
        packed.pages = [base64.b64encode(gzip.compress(p.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")
                        for p in packed.pages]
    return packed
