"""The report's viewer shows a verifier's layer scores and its screenshot (the ui kind's evidence), in
headless Chromium: one attempt of the real small run is given a ui outcome (layer scores, a PNG in its
`verifier/` folder, named by `outcome.artifacts`), the report is written by the real CLI and the attempt
opened. The trajectory is restored afterwards (the run is shared by the module's tests)."""

from __future__ import annotations

import json
import struct
import subprocess
import zlib
from pathlib import Path

from rsi.store import open_store

LAYERS = {"viability": 1.0, "task": 1.0, "interaction": 0.5, "constraints": 1.0, "visual": 1.0}


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A flat-colour PNG, written by hand (the viewer test needs a real image, not the judge)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_the_viewer_shows_layer_scores_and_the_screenshot(small_run, page, tmp_path: Path) -> None:
    ws = small_run["ws"]
    with open_store(ws.db_url) as store:
        rows = store.list_attempts(small_run["run_id"])
    chosen = next(r for r in rows if r.trajectory_path)
    path = Path(chosen.trajectory_path)
    path = path if path.is_absolute() else ws.runs_dir / path
    original = path.read_text()
    try:
        raw = json.loads(original)
        raw["outcome"].update(layer_scores=LAYERS, artifacts={"screenshot": "verifier/screenshot.png"})
        (path.parent / "verifier").mkdir(exist_ok=True)
        (path.parent / "verifier" / "screenshot.png").write_bytes(png(64, 48, (30, 120, 200)))
        path.write_text(json.dumps(raw))
        out = tmp_path / "report.html"
        done = subprocess.run([small_run["exe"], "report", small_run["run_id"], "--out", str(out)], cwd=ws.root,
                              env=small_run["env"], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    finally:
        path.write_text(original)
    page.navigate(out.as_uri())
    count = page.evaluate("JSON.parse(document.getElementById('rsi-index').textContent).attempts.length")
    opened = None
    for n in range(count):  # the report numbers attempts chronologically: open each until the changed one
        page.evaluate(f"location.hash = '#attempt-{n}'")
        page.wait_for(f"document.getElementById('attempt-{n}') && "
                      "!document.getElementById('viewer-attempt').innerText.includes('loading')")
        if page.evaluate("!!document.querySelector('#viewer-attempt img.screenshot')"):
            opened = n
            break
    assert opened is not None, "no attempt shows a screenshot"
    size = page.evaluate("(i => [i.naturalWidth, i.naturalHeight, i.src.slice(0, 22)])"
                         "(document.querySelector('#viewer-attempt img.screenshot'))")
    assert size == [64, 48, "data:image/png;base64,"]
    text = page.evaluate("document.getElementById('viewer-attempt').innerText")
    assert "VERIFIER LAYERS" in text.upper() and "interaction\t50%" in text and "viability\t100%" in text
    assert page.errors == [], page.errors
