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


def test_contract_resolution_prefers_the_workspace(workspace, tmp_path, monkeypatch) -> None:
    from rsi.models.serve import resolve_contract

    spec, found = resolve_contract("default", workspace.root)
    assert found == workspace and spec.hcp.name == "default"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    monkeypatch.delenv("RSI_WORKSPACE", raising=False)
    spec, found = resolve_contract(None)  # no workspace here: the shipped default contract
    assert found is None and spec.base.id == "SmolLM2-135M-Instruct"
    spec, found = resolve_contract(str(workspace.contract_path("default")))  # a path finds its workspace
    assert found == workspace and spec.hcp.name == "default"
    loose = outside / "mine.toml"
    loose.write_text(
        workspace.contract_path("default").read_text().replace('system_prompt_file = "prompts/repl.md"', "")
    )
    spec, found = resolve_contract(str(loose))  # a contract outside any workspace
    assert found is None and spec.hcp.name == "default"


def test_busy_port_exits_2_before_loading_the_model(cli, tmp_path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = cli("serve", "--port", str(port), cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert f"--port {port}" in done.stderr and "Traceback" not in done.stderr
