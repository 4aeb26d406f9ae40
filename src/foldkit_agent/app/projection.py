"""Projections: the part of the Model an agent may see.

A projection reads a Model into a dict keyed by field name, and knows its JSON Schema and
JSON encoding::

    context = projection.pick(App.model.todos, App.model.selected_todo_id)
    context.get(model)      # {"todos": (Todo(...),), "selected_todo_id": None}
    context.encode(model)   # the same as JSON data

Its JSON Schema (the compatibility profile) is computed by the contract layer:
:func:`foldkit_agent.contract.schema.projection_schema`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from pydantic import BaseModel, TypeAdapter
from typing_extensions import TypedDict

from ..errors import AgentContractError
from .surface import FieldRef, field_annotation, field_path, read_field

__all__ = ["Projection", "compose", "pick"]


class Projection:
    """A named set of fields read from a Model.

    Attributes:
        fields: field name -> declared type, in order.
        shape: a ``TypedDict`` of those fields (what the encoded value looks like).
    """

    __slots__ = ("__weakref__", "_adapter", "_getters", "fields", "shape")

    def __init__(
        self, fields: Mapping[str, Any], getters: Mapping[str, Callable[[Any], Any]]
    ) -> None:
        self.fields: dict[str, Any] = dict(fields)
        self._getters = dict(getters)
        self.shape: Any = TypedDict("Projection", self.fields)  # type: ignore[misc]
        self._adapter: TypeAdapter[Any] = TypeAdapter(self.shape)

    def get(self, model: BaseModel) -> dict[str, Any]:
        """The projected value: ``{field name: Python value}`` read from ``model``."""
        return {name: read(model) for name, read in self._getters.items()}

    def encode(self, model: BaseModel) -> dict[str, Any]:
        """The projected value as JSON data (what an agent receives)."""
        return self._adapter.dump_python(self.get(model), mode="json", by_alias=True)

    def encode_value(self, value: Mapping[str, Any]) -> dict[str, Any]:
        """Encode an already-projected value (from :meth:`get`) as JSON data."""
        return self._adapter.dump_python(dict(value), mode="json", by_alias=True)

    def __repr__(self) -> str:
        return f"Projection({', '.join(self.fields)})"


def pick(*refs: FieldRef) -> Projection:
    """A projection of the given fields, keyed by each field's last name.

    Raises:
        AgentContractError: no fields, a non-field argument, or two fields with one name.
    """
    if not refs:
        raise AgentContractError("projection.pick needs at least one field")
    fields: dict[str, Any] = {}
    getters: dict[str, Callable[[Any], Any]] = {}
    for ref in refs:
        if not isinstance(ref, FieldRef) or not field_path(ref):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentContractError(
                f"projection.pick takes field references like App.model.x, got {ref!r}"
            )
        key = field_path(ref)[-1]
        if key in fields:
            raise AgentContractError(f"projection.pick got two fields named {key!r}")
        fields[key] = field_annotation(ref)
        getters[key] = partial(read_field, ref)
    return Projection(fields, getters)


def compose(*projections: Projection) -> Projection:
    """One projection holding the fields of several disjoint ones.

    Raises:
        AgentContractError: two projections share a field name.
    """
    fields: dict[str, Any] = {}
    getters: dict[str, Callable[[Any], Any]] = {}
    for p in projections:
        for name, annotation in p.fields.items():
            if name in fields:
                raise AgentContractError(f"projection.compose: {name!r} appears in two projections")
            fields[name] = annotation
            getters[name] = p._getters[name]  # pyright: ignore[reportPrivateUsage]
    return Projection(fields, getters)
