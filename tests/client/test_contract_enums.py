"""Each of the spec's enums is defined once, as a Literal in contract.py; everything else that
names its values (the wire models, the client's checks, the tools' schemas, which the schema
snapshot pins) is made from it."""

from __future__ import annotations

import enum
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from screvi_mcp import contract, models
from screvi_mcp.client import params

# Every enum of the spec, as contract.py defines it.
ENUMS: dict[str, Any] = {
    name: value
    for name, value in vars(contract).items()
    if getattr(value, "__origin__", None) is not None and get_args(value)
}


def schema_enum(model: type[BaseModel], field: str) -> list[str]:
    return list(model.model_json_schema()["properties"][field]["enum"])


def test_no_model_enum_restates_a_contract_enum() -> None:
    # A StrEnum in models.py with the values of a contract Literal would be a second
    # definition free to drift; the models use the Literals themselves.
    restated = {
        name: member_values
        for name, member in vars(models).items()
        if isinstance(member, type) and issubclass(member, enum.Enum)
        for member_values in [{item.value for item in member}]
        if any(member_values == set(get_args(literal)) for literal in ENUMS.values())
    }
    assert not restated, f"define these once, in contract.py: {restated}"


@pytest.mark.parametrize(
    ("model", "field", "values"),
    [
        (models.Article, "status", contract.ARTICLE_STATUSES),
        (models.Article, "home_status", contract.HOME_STATUSES),
        (models.ArticleWithContent, "content_format", contract.CONTENT_FORMATS),
    ],
)
def test_wire_models_accept_exactly_the_contract_values(
    model: type[BaseModel], field: str, values: tuple[str, ...]
) -> None:
    assert schema_enum(model, field) == list(values)


def test_the_client_checks_against_the_contract_values() -> None:
    assert set(get_args(contract.SourceTypeName)) == params.SOURCE_TYPES
    assert set(get_args(contract.ArticleStatusName)) == params.ARTICLE_STATUSES
    assert set(get_args(contract.HomeStatusName)) == params.HOME_STATUSES
    assert set(get_args(contract.ContentFormatName)) == params.CONTENT_FORMATS
    assert set(get_args(contract.SourceListType)) == params.SOURCE_LIST_TYPES
