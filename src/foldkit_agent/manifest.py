"""The contract as a committed manifest (``agent.json``) and as documentation (``AGENT.md``)."""

from __future__ import annotations

import json
from typing import Any

from .contract import AgentDefinition
from .introspect import context_schema, messages, resources

__all__ = ["to_manifest", "to_markdown"]

MANIFEST_VERSION = 1


def to_manifest(definition: AgentDefinition) -> dict[str, Any]:
    """The contract as deterministic JSON data; ``json.dumps(m, sort_keys=True, indent=2)``."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "capabilities": messages(definition),
        "resources": resources(definition),
        "context": context_schema(definition),
    }


def to_markdown(definition: AgentDefinition) -> str:
    """The contract as Markdown documentation."""
    lines = ["# Agent contract", ""]
    for cap in messages(definition):
        lines += [f"## `{cap['name']}`", "", cap["description"], ""]
        lines += ["```json", json.dumps(cap["input_schema"], sort_keys=True, indent=2), "```", ""]
    return "\n".join(lines)
