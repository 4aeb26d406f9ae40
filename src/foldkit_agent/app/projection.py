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

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from operator import attrgetter
from typing import Any

from pydantic import BaseModel, TypeAdapter
from typing_extensions import TypedDict

from ..errors import AgentContractError
from .surface import FieldRef, field_annotation, field_path, field_root, read_field

__all__ = ["Projection", "compose", "one_root", "pick"]


class Projection:
    """A named set of fields read from a Model.

    Attributes:
        fields: field name -> declared type, in order.
        shape: a ``TypedDict`` of those fields (what the encoded value looks like).
        root: the Model class every field is read from (``None`` when built by hand); a
            contract refuses a projection of another application's Model.
    """

    __slots__ = ("__weakref__", "_adapter", "_getters", "fields", "root", "shape")

    def __init__(
        self,
        fields: Mapping[str, Any],
        getters: Mapping[str, Callable[[Any], Any]],
        root: type[BaseModel] | None = None,
    ) -> None:
        self.root = root
        self.fields: dict[str, Any] = dict(fields)
        self._getters = dict(getters)
        self.shape: Any = TypedDict("Projection", self.fields)  # type: ignore[misc]
        self._adapter: TypeAdapter[Any] = TypeAdapter(self.shape)

    def get(self, model: BaseModel) -> dict[str, Any]:
        """The projected value: ``{field name: Python value}`` read from ``model``."""
        value: dict[str, Any] = {}
        for name, read in self._getters.items():  # a plain loop: read on every Model change
            value[name] = read(model)
        return value

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
        AgentContractError: no fields, a non-field argument, two fields with one name, or
            fields of two different Models.
    """
    if not refs:
        raise AgentContractError("projection.pick needs at least one field")
    fields: dict[str, Any] = {}
    getters: dict[str, Callable[[Any], Any]] = {}
    roots: list[type[BaseModel] | None] = []
    for ref in refs:
        if not isinstance(ref, FieldRef) or not field_path(ref):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentContractError(
                f"projection.pick takes field references like App.model.x, got {ref!r}"
            )
        key = field_path(ref)[-1]
        if key in fields:
            raise AgentContractError(f"projection.pick got two fields named {key!r}")
        fields[key] = field_annotation(ref)
        path = field_path(ref)
        # A field of the Model itself has no ancestor that could be None, so reading it is
        # getattr, which attrgetter does without a Python frame (a projection is read on
        # every Model change); a nested one reads its path with read_field.
        getters[key] = attrgetter(path[0]) if len(path) == 1 else partial(read_field, ref)
        roots.append(field_root(ref))
    return Projection(fields, getters, one_root(roots, "projection.pick"))


def one_root(roots: Iterable[type[BaseModel] | None], where: str) -> type[BaseModel] | None:
    """The one Model class ``roots`` share (``None`` when none is known).

    Raises:
        AgentContractError: two different Model classes.
    """
    found: type[BaseModel] | None = None
    for root in roots:
        if root is None:
            continue
        if found is not None and root is not found:
            raise AgentContractError(
                f"{where} mixes fields of {found.__name__} and {root.__name__}; every field "
                "must be read from this application's Model"
            )
        found = root
    return found


def compose(*projections: Projection) -> Projection:
    """One projection holding the fields of several disjoint ones.

    Raises:
        AgentContractError: two projections share a field name, or read different Models.
    """
    root = one_root((p.root for p in projections), "projection.compose")
    fields: dict[str, Any] = {}
    getters: dict[str, Callable[[Any], Any]] = {}
    for p in projections:
        for name, annotation in p.fields.items():
            if name in fields:
                raise AgentContractError(f"projection.compose: {name!r} appears in two projections")
            fields[name] = annotation
            getters[name] = p._getters[name]  # pyright: ignore[reportPrivateUsage]
    return Projection(fields, getters, root)
