"""Resolving `rsi attempt` references: contracts, portfolio variants, tasks by key or folder."""

from __future__ import annotations

import pytest

from rsi.errors import UserInputError
from rsi.harness.single import resolve_configuration, resolve_task_ref


def test_a_contract_name_and_a_portfolio_variant_resolve_to_configurations(workspace):
    contract = resolve_configuration(workspace, "default")
    assert contract.name == "default" and contract.spec.harness.substrate == "repl"
    variant = resolve_configuration(workspace, "default:text-greedy")
    assert variant.name == "text-greedy" and variant.spec.harness.substrate == "text"
    assert variant.config_hash != contract.config_hash
    with pytest.raises(UserInputError, match="no variant 'nope'"):
        resolve_configuration(workspace, "default:nope")


def test_tasks_resolve_by_key_and_by_folder(workspace):
    by_key = resolve_task_ref(workspace, "pyfuncs/add-two")
    by_folder = resolve_task_ref(workspace, str(workspace.tasks_dir / "pyfuncs" / "add-two"))
    assert by_key.key == "pyfuncs/add-two" and by_folder.content_hash == by_key.content_hash
    with pytest.raises(UserInputError, match="SUITE/TASK-ID"):
        resolve_task_ref(workspace, "add-two")
