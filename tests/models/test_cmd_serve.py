"""`rsi serve` flag errors are one clear line and exit 2, before any model is loaded."""

from __future__ import annotations


def test_malformed_adapter_flag_exits_2(cli, tmp_path) -> None:
    done = cli("serve", "--adapter", "no-equals-sign", cwd=tmp_path)
    assert done.returncode == 2
    assert "expected NAME=PATH" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_dtype_exits_2(cli, tmp_path) -> None:
    done = cli("serve", "--dtype", "int3", cwd=tmp_path)
    assert done.returncode == 2
    assert "dtype" in done.stderr and "Traceback" not in done.stderr


def test_unknown_contract_exits_2(cli, workspace) -> None:
    done = cli("serve", "--contract", "nosuch", cwd=workspace.root)
    assert done.returncode == 2
    assert "nosuch" in done.stderr and "Traceback" not in done.stderr
