"""Records shared by the layers that write contract revisions (training's candidates, evaluation's promotions).

They sit with the contracts because they describe a contract revision, and both `rsi.training` and
`rsi.evaluation` report one: neither has to import the other for it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, BeforeValidator, Field, PlainSerializer

# A record that may be absent is None in Python and {} in the JSON (how `rsi train --json` and eval.json
# have always written a missing candidate or decision): Annotated[Record | None, EMPTY_IS_NONE, none_as_empty()].
EMPTY_IS_NONE = BeforeValidator(lambda value: None if value == {} else value)


def none_as_empty(exclude_defaults: bool = False) -> PlainSerializer:
    """The serializer of such a field: the record's JSON, or {} for None."""

    def dump(value: BaseModel | None) -> dict[str, Any]:
        return value.model_dump(mode="json", exclude_defaults=exclude_defaults) if value is not None else {}

    return PlainSerializer(dump)


class RevisionWritten(BaseModel):
    """A contract revision written (or found already written) for an adapter: the candidate that routes
    to it, or the parent's revision it was promoted into (rsi.promotion.adapter.ContractRevisionRef)."""

    name: str
    revision: int
    ref: str = Field(description="NAME@rN")
    tag: str
    commit: str
    content_hash: str
    written: bool = Field(description="False when an earlier run had written it (the step is idempotent).")
