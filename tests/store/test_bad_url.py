"""A store URL pointing into folders that do not exist: one located line, exit 2, nothing created."""

from __future__ import annotations

from pathlib import Path


def test_sqlite_url_into_missing_folders_is_an_error_and_creates_nothing(workspace, cli, tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    url = f"sqlite:///{missing}/dir/x.sqlite"
    done = cli("status", cwd=workspace.root, env={"RSI_DB": url})
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: database {missing}/dir/x.sqlite: the folder {missing} does not exist"], done.stderr
    assert "Traceback" not in done.stderr
    assert not missing.exists()


def test_the_default_store_still_gets_its_runs_folder(workspace, cli) -> None:
    runs = workspace.root / "runs"
    if runs.exists():
        import shutil

        shutil.rmtree(runs)
    done = cli("status", cwd=workspace.root, env={"RSI_DB": ""})
    assert "does not exist" not in done.stderr
    assert (runs / "rsi.sqlite").is_file()
