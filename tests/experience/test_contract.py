"""The library in the contract: later keys left out of identities at their defaults, config_hash only with exemplars."""

from __future__ import annotations

import pytest

from rsi.config import Configuration
from rsi.contracts.hashing import content_hash
from rsi.contracts.schema import ContractSpec

BASE = {"hcp": {"name": "t", "revision": 1, "created": "2026-01-01T00:00:00Z"},
        "base": {"id": "m", "file": "m.gguf"}}
SHA = "a" * 64


def spec(**harness: object) -> ContractSpec:
    return ContractSpec.model_validate({**BASE, "harness": harness})


def config_hash(**harness: object) -> str:
    return Configuration(name="c", contract_ref="x", spec=spec(**harness)).config_hash


def test_the_new_keys_at_their_defaults_keep_every_hash() -> None:
    assert content_hash(spec(), "") == content_hash(spec(exemplars=0, experience="", experience_sha256=""), "")
    assert config_hash() == config_hash(exemplars=0, experience="", experience_sha256="")


def test_a_library_changes_the_contract_identity_but_not_the_runtime_until_exemplars_are_on() -> None:
    carried = {"experience": "r2", "experience_sha256": SHA}
    assert content_hash(spec(**carried), "") != content_hash(spec(), "")
    assert config_hash(**carried) == config_hash()  # nothing retrieved: attempts cannot differ
    assert config_hash(**carried, exemplars=2) != config_hash()
    assert config_hash(**carried, exemplars=2) != config_hash(experience="r3", experience_sha256=SHA, exemplars=2)


@pytest.mark.parametrize(("harness", "where"), [
    ({"exemplars": 1}, "exemplars need an experience library"),
    ({"experience_sha256": SHA}, "a digest without a library"),
    ({"experience": "2"}, "String should match pattern"),
    ({"experience": "r1", "exemplars": 9}, "less than or equal to 8"),
])
def test_inconsistent_settings_are_refused(harness: dict[str, object], where: str) -> None:
    with pytest.raises(ValueError, match=where):
        spec(**harness)
