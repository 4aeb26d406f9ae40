"""The contract as plain data, testable without a model or an LLM."""

from __future__ import annotations

from typing import Any

from .contract import AgentDefinition

__all__ = ["context_schema", "messages", "resources", "schema"]


def messages(definition: AgentDefinition) -> list[dict[str, Any]]:
    """One dict per capability, in declaration order.

    Keys: ``name``, ``tag``, ``description``, ``input_schema``, ``model_dependent`` (has an
    ``available`` predicate), ``authorized`` (has an ``authorize`` hook), ``completion``
    (``"none"``, ``"message"`` or ``"state"``).

    >>> [m["name"] for m in messages(AppAgent)]
    ['create_todo', 'rename_todo', 'delete_todo']
    """
    return [
        {
            "name": c.name,
            "tag": c.tag,
            "description": c.description,
            "input_schema": c.input_schema,
            "model_dependent": c.available is not None,
            "authorized": c.authorize is not None,
            "completion": c.completion_kind,
        }
        for c in definition.capabilities
    ]


def resources(definition: AgentDefinition) -> list[dict[str, Any]]:
    """One dict per resource: ``name``, ``description``, ``schema``."""
    return [
        {"name": r.name, "description": r.description, "schema": r.projection.json_schema()}
        for r in definition.resources.values()
    ]


def context_schema(definition: AgentDefinition) -> dict[str, Any] | None:
    """The JSON Schema of the context projection, or ``None`` without a context."""
    return None if definition.context is None else definition.context.json_schema()


def schema(definition: AgentDefinition) -> dict[str, Any]:
    """The whole contract as data.

    Returns ``{"capabilities": messages(d), "resources": resources(d),
    "context": context_schema(d)}``.
    """
    return {
        "capabilities": messages(definition),
        "resources": resources(definition),
        "context": context_schema(definition),
    }
