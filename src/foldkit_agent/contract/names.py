"""Capability names: the default derived from a tag, and the rule every name must meet.

A capability name becomes a tool name on the wire. MCP (SEP-986), WebMCP's ``registerTool``
and A2A skill ids all accept ``[A-Za-z0-9_-]{1,128}``, so that is the rule here, checked when
the contract is declared rather than when a client rejects the tool.
"""

from __future__ import annotations

import re

__all__ = ["NAME_PATTERN", "default_name", "is_valid_name", "suggested_name"]

NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""The pattern every capability and resource name must match in full."""


def default_name(tag: str) -> str:
    """The default capability name for a tag: every capital letter starts a word.

    >>> default_name("RequestedDeleteTodo")
    'requested_delete_todo'
    >>> default_name("HTTPGet")
    'h_t_t_p_get'
    """
    out: list[str] = []
    for i, ch in enumerate(tag):
        if ch.isupper():
            if i > 0:
                out.append("_")
            out.append(ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def suggested_name(name: object) -> str:
    """A capability name close to ``name`` that matches :data:`NAME_PATTERN`: each run of
    other characters becomes ``_`` (non-ASCII letters too), cut to 128 characters.

    >>> suggested_name("Cart.AddItem")
    'Cart_AddItem'
    >>> suggested_name("")
    'capability'
    """
    text = name if isinstance(name, str) else ""
    made = re.sub(r"[^A-Za-z0-9_-]+", "_", text)[:128]
    return made if made.strip("_") else "capability"


def is_valid_name(name: str) -> bool:
    """True when ``name`` matches :data:`NAME_PATTERN` in full (ASCII only)."""
    return NAME_PATTERN.fullmatch(name) is not None
