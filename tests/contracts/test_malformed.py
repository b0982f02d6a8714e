"""The malformed corpus: every case names its exact `file:line: key` and exits 2 through the real CLI.

Each file under malformed/ (contracts) and malformed/portfolios/ starts with a comment saying what
is wrong and one or more `# expect: LINE: KEY: SUBSTRING` lines: the problem that must be reported.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rsi.contracts.load import check_contracts
from rsi.errors import ContractError
from rsi.portfolio import resolve_portfolio

CORPUS = Path(__file__).resolve().parent / "malformed"
CONTRACTS = sorted(CORPUS.glob("*.toml"))
PORTFOLIOS = sorted((CORPUS / "portfolios").glob("*.toml"))
EXPECT = re.compile(r"^# expect: (\d+): (.*?): (.*)$")


def expectations(case: Path) -> list[tuple[int, str, str]]:
    found = []
    for line in case.read_text().splitlines():
        match = EXPECT.match(line)
        if match:
            found.append((int(match.group(1)), match.group(2), match.group(3)))
    return found


def assert_reported(stderr: str, case: Path) -> None:
    lines = stderr.splitlines()
    for line, key, substring in expectations(case):
        prefix = f"error: {case}:{line}: {key}: "
        hits = [text for text in lines if text.startswith(prefix)]
        assert hits, f"no line starting {prefix!r} in:\n{stderr}"
        assert any(substring in text for text in hits), f"{substring!r} not in {hits}"


def test_corpus_is_large_and_every_case_states_its_expectation() -> None:
    assert len(CONTRACTS) >= 15 and len(PORTFOLIOS) >= 8
    for case in CONTRACTS + PORTFOLIOS:
        assert expectations(case), f"{case.name} has no '# expect:' line"


@pytest.mark.parametrize("case", CONTRACTS, ids=lambda p: p.stem)
def test_malformed_contract_through_cli(case: Path, cli, tmp_path: Path) -> None:
    result = cli("hcp", "validate", str(case), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert_reported(result.stderr, case)


@pytest.mark.parametrize("case", CONTRACTS, ids=lambda p: p.stem)
def test_malformed_contract_in_process(case: Path) -> None:
    """`check_contracts` is what `hcp validate` calls: load_contract plus the name-matches-file rule."""
    problems = [problem for _, _, found in check_contracts([case]) for problem in found]
    assert problems
    for line, key, substring in expectations(case):
        assert any(
            str(p.file) == str(case) and p.line == line and p.key == key and substring in str(p) for p in problems
        ), f"expected {line}: {key}: {substring} in {[str(p) for p in problems]}"


@pytest.mark.parametrize("case", PORTFOLIOS, ids=lambda p: p.stem)
def test_malformed_portfolio_through_cli(case: Path, cli, shared_workspace) -> None:
    result = cli("portfolio", "validate", str(case), cwd=shared_workspace.root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert_reported(result.stderr, case)


@pytest.mark.parametrize("case", PORTFOLIOS, ids=lambda p: p.stem)
def test_malformed_portfolio_in_process(case: Path, shared_workspace) -> None:
    with pytest.raises(ContractError) as raised:
        resolve_portfolio(shared_workspace, case)
    rendered = [str(p) for p in raised.value.problems]
    for line, key, substring in expectations(case):
        assert any(text.startswith(f"{case}:{line}: {key}: ") and substring in text for text in rendered), rendered


def test_all_problems_of_one_file_are_reported_together(tmp_path: Path, cli) -> None:
    """Seven different problems in one contract: all seven lines, one run, exit 2."""
    source = (CORPUS.parent.parent.parent / "hcp" / "default.toml").read_text()
    broken = (
        source.replace("temperature = 0.0", "temprature = 0.0")
        .replace("max_turns = 4", 'max_turns = "four"')
        .replace("prompts/repl.md", "prompts/missing.md")
        .replace("parent = 0", "parent = 3")
        .replace("attempts_budget = 120", "attempts_budget = -1")
        .replace('specialist = ""', 'specialist = "ghost"')
        .replace('substrate = "repl"', 'substrate = "bash"')
    )
    path = tmp_path / "default.toml"  # hcp.name = "default": the name matches the file
    path.write_text(broken)
    result = cli("hcp", "validate", str(path), cwd=tmp_path)
    assert result.returncode == 2
    keys = [
        "hcp.parent",
        "harness.substrate",
        "harness.system_prompt_file",
        "harness.max_turns",
        "harness.sampling.temprature",
        "routing.specialist",
        "evaluation.attempts_budget",
    ]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == len(keys), result.stderr
    for key in keys:
        line = next(n for n, text in enumerate(broken.splitlines(), 1) if text.startswith(key.split(".")[-1] + " "))
        assert any(e.startswith(f"error: {path}:{line}: {key}: ") for e in errors), (key, line, result.stderr)


def test_debug_shows_the_traceback_only_when_asked(tmp_path: Path, cli) -> None:
    case = CORPUS / "unknown_key_typo.toml"
    quiet = cli("hcp", "validate", str(case), cwd=tmp_path)
    loud = cli("--debug", "hcp", "validate", str(case), cwd=tmp_path)
    assert "Traceback" not in quiet.stderr
    assert "Traceback" in loud.stderr and loud.returncode != 0


def test_validate_a_folder_checks_every_contract_in_it(tmp_path: Path, cli) -> None:
    """`hcp validate DIR`: one line per contract, every problem located, exit 2 on any."""
    folder = tmp_path / "contracts"
    folder.mkdir()
    good = (CORPUS.parent.parent.parent / "hcp" / "default.toml").read_text()
    (folder / "default.toml").write_text(good)
    (folder / "prompts").mkdir()
    for prompt in (CORPUS.parent.parent.parent / "hcp" / "prompts").glob("*"):
        (folder / "prompts" / prompt.name).write_text(prompt.read_text())
    ok = cli("hcp", "validate", str(folder), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert f"ok  {folder / 'default.toml'}" in ok.stdout
    (folder / "renamed.toml").write_text(good)
    bad = cli("hcp", "validate", str(folder), cwd=tmp_path)
    assert bad.returncode == 2
    line = next(n for n, text in enumerate(good.splitlines(), 1) if text.startswith("name = "))
    assert f"error: {folder / 'renamed.toml'}:{line}: hcp.name: 'default' differs from the file name 'renamed'" in bad.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    none = cli("hcp", "validate", str(empty), cwd=tmp_path)
    assert none.returncode == 2 and f"error: {empty}: no contracts (*.toml) in this folder" in none.stderr
    missing = cli("hcp", "validate", str(tmp_path / "nope.toml"), cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr
