"""The run report of a real small run (scripted model through the real orchestrator, harness, sandbox,
verifier and SQLite store), written by the real CLI and opened in headless Chromium."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from rsi.store import open_store


def _report(small_run, out: Path, *extra: str) -> Path:
    ws = small_run["ws"]
    result = subprocess.run([small_run["exe"], "report", small_run["run_id"], "--out", str(out), "--json", *extra],
                            cwd=ws.root, env=small_run["env"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"run_id": small_run["run_id"], "report": str(out)}
    return out


def _attempts(small_run) -> list[SimpleNamespace]:
    """The run's attempt rows from the store, each with its configuration's name as `config`."""
    ws = small_run["ws"]
    with open_store(ws.db_url) as store:
        rows = store.list_attempts(small_run["run_id"])
        names = {c.config_hash: c.name for c in store.list_configurations({r.configuration_hash for r in rows})}
    return [SimpleNamespace(**r.model_dump(), config=names[r.configuration_hash]) for r in rows]


@pytest.fixture(scope="module")
def report_path(small_run, tmp_path_factory) -> Path:
    return _report(small_run, tmp_path_factory.mktemp("report") / "report.html")


def test_the_file_is_self_contained_and_indexes_every_attempt(small_run, report_path) -> None:
    html = report_path.read_text()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "http://" not in html and "https://" not in html
    assert len(re.findall(r'src="data:image/png;base64,', html)) == 1  # the portfolio chart
    [index] = re.findall(r'<script type="application/json" id="rsi-index">(.*?)</script>', html)
    data = json.loads(index)
    attempts = _attempts(small_run)
    assert len(data["attempts"]) == len(attempts) == small_run["outcome"]["attempts"]
    assert sorted(c[0] for c in data["configs"]) == ["baseline", "short"]
    assert [t[0] for t in data["tasks"]] == sorted(small_run["expected"])
    # every attempt with a trajectory file has its transcript on a page
    assert all(row[11] >= 0 for row in data["attempts"]) and data["pages"] >= 1


def test_the_report_in_a_browser(small_run, report_path, page, tmp_path) -> None:
    seconds = page.navigate(report_path.as_uri())
    assert page.evaluate("window.rsiReport && window.rsiReport.ready") is True
    assert page.errors == [], page.errors
    assert seconds < 30
    shots = [page.screenshot(tmp_path / "overview.png")]

    # The matrix: one cell per configuration and task, each cell's counts from the store.
    page.evaluate("location.hash = '#matrix'")
    page.wait_for("document.querySelectorAll('td.cell').length")
    cells = page.evaluate("[...document.querySelectorAll('td.cell')].map(td => [td.dataset.config, td.dataset.task,"
                          " td.className, td.textContent])")
    configs = page.evaluate("JSON.parse(document.getElementById('rsi-index').textContent).configs.map(c => c[0])")
    tasks = sorted(small_run["expected"])
    assert len(cells) == len(configs) * len(tasks) == 8
    assert {(int(c), int(t)) for c, t, _, _ in cells} == {(c, t) for c in range(2) for t in range(4)}
    attempts = _attempts(small_run)
    for c, t, cls, text in cells:
        mine = [a for a in attempts if a.task_key == tasks[int(t)] and a.config == configs[int(c)]]
        passes = sum(a.passed for a in mine)
        assert text == (f"{passes}/{len(mine)}" if mine else ""), (c, t)
        assert ("passed" in cls) == (passes > 0) and ("none" in cls) == (not mine)
    shots.append(page.screenshot(tmp_path / "matrix.png"))

    # Filter by verdict: only the tasks some configuration solved stay; then back to all.
    solved = {a.task_key for a in attempts if a.passed}
    page.evaluate("(s => { s.value = 'solved'; s.dispatchEvent(new Event('change')); })"
                  "(document.querySelector('select[aria-label=verdict]'))")
    shown = page.evaluate("[...document.querySelectorAll('a.task-link')].map(a => a.textContent)")
    assert sorted(shown) == sorted(solved) and 0 < len(solved) < len(tasks)
    page.evaluate("(s => { s.value = ''; s.dispatchEvent(new Event('change')); })"
                  "(document.querySelector('select[aria-label=verdict]'))")

    # A task row opens every attempt at that task, whichever configuration made it.
    page.click("a.task-link")
    first_task = page.evaluate("document.querySelector('a.task-link').textContent")
    page.wait_for("document.querySelectorAll('#viewer-attempt .step').length")
    listed = page.evaluate("document.querySelectorAll('#viewer-list li').length")
    assert listed == sum(a.task_key == first_task for a in attempts)
    page.evaluate("document.getElementById('viewer-close').click()")

    # Clicking a passed cell opens that attempt's transcript: the code the scripted model sent.
    page.click("td.cell.passed")
    page.wait_for("document.querySelectorAll('#viewer-attempt .step').length")
    viewer = page.evaluate("document.getElementById('viewer-attempt').innerText")
    title = page.evaluate("document.getElementById('viewer-title').textContent")
    config_name, task_key = re.match(r"(\S+) on (\S+) — ", title).groups()
    [opened] = [a for a in attempts if a.task_key == task_key and a.passed and a.config == config_name]
    trajectory = json.loads(Path(opened.trajectory_path).read_text())
    agent = next(s for s in trajectory["steps"] if s["source"] == "agent")
    assert agent["code"].splitlines()[0] in viewer
    assert trajectory["outcome"]["reason"] in viewer and "passed" in viewer
    assert "sandbox isolation".upper() in viewer.upper() and trajectory["sandbox"]["backend"] in viewer
    shots.append(page.screenshot(tmp_path / "transcript.png"))
    page.evaluate("document.getElementById('viewer-close').click()")

    # Search: a word from one task's reference solution is found in exactly the attempts that wrote it.
    word = agent["code"].split("def ", 1)[1].split("(", 1)[0]
    expected = sum(word in Path(a.trajectory_path).read_text() for a in attempts)
    assert expected >= 1
    page.evaluate("location.hash = '#search'")
    page.evaluate(f"document.getElementById('search-input').value = {json.dumps(word)};"
                  " document.getElementById('search-form').requestSubmit()")
    status = page.wait_for("(t => /match/.test(t) && t)(document.getElementById('search-status').textContent)")
    assert status.startswith(f"{expected} attempt")
    assert page.evaluate("document.querySelectorAll('#search-results .hit').length") == expected
    assert page.evaluate("document.querySelector('#search-results mark').textContent").lower() == word.lower()
    shots.append(page.screenshot(tmp_path / "search.png"))

    page.evaluate("location.hash = '#jobs'")
    rows = page.wait_for("document.querySelectorAll('#view-jobs tbody tr').length")
    assert rows == small_run["outcome"]["jobs"]
    shots.append(page.screenshot(tmp_path / "jobs.png"))
    assert page.errors == [], page.errors
    assert all(shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000 for shot in shots)


def test_compressed_transcript_pages_open_in_a_browser(small_run, page, tmp_path) -> None:
    from rsi.report import write_report

    ws = small_run["ws"]
    with open_store(ws.db_url) as store:
        path = write_report(store, small_run["run_id"], tmp_path / "packed.html", compress_over_bytes=0)
    assert "application/x-rsi-gzip-base64" in path.read_text()
    page.navigate(path.as_uri())
    page.evaluate("location.hash = '#matrix'")
    page.wait_for("document.querySelectorAll('td.cell').length")
    page.click("td.cell.failed")
    page.wait_for("document.querySelectorAll('#viewer-attempt .step').length")
    assert "x = 1" in page.evaluate("document.getElementById('viewer-attempt').innerText")  # the wrong solution
    assert page.errors == [], page.errors


def test_report_without_a_run_exits_2_and_the_latest_is_the_default(small_run, tmp_path) -> None:
    ws = small_run["ws"]
    missing = subprocess.run([small_run["exe"], "report", "nope"], cwd=ws.root, env=small_run["env"],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and "nope" in missing.stderr
    latest = subprocess.run([small_run["exe"], "report", "--json", "--out", str(tmp_path / "r.html")], cwd=ws.root,
                            env=small_run["env"], capture_output=True, text=True, timeout=300)
    assert latest.returncode == 0, latest.stderr
    assert json.loads(latest.stdout)["run_id"] == small_run["run_id"]


def test_an_empty_run_opens_without_errors(page, tmp_path) -> None:
    from rsi.report import write_report
    from rsi.store import ConfigInfo, TaskInfo

    with open_store(f"sqlite:///{tmp_path / 'rsi.sqlite'}") as store:
        store.record_configurations([ConfigInfo("c" * 64, "only")])
        store.record_tasks([TaskInfo("s", "a")])
        run = store.create_run(portfolio="p", suite="s", args={"tasks": ["s/a"], "configs": ["c" * 64]})
        path = write_report(store, run.id, tmp_path / "empty.html")
    page.navigate(path.as_uri())
    page.evaluate("location.hash = '#matrix'")
    assert page.wait_for("document.querySelectorAll('td.cell.none').length") == 1  # one configuration, one task
    page.evaluate("location.hash = '#search'")
    page.evaluate("document.getElementById('search-input').value = 'x';"
                  " document.getElementById('search-form').requestSubmit()")
    assert page.wait_for("document.getElementById('search-status').textContent") == "0 attempts match"
    assert page.errors == [], page.errors
