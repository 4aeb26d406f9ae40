"""Visible text: any string an agent supplied, made safe to show a person.

An approval prompt, an activity view or a refusal shows strings that came from an agent (an
input value, a sentence built from it, a name the agent asked for). Some characters change how
the text around them *reads* without being seen: a right-to-left override (U+202E) makes
``"…\\u202etneserp"`` read "…present", a line separator (U+2028, U+2029, U+0085) or a newline
forges a line of the prompt ("Nothing is sent unless you approve."), a zero-width character
hides inside a name. :func:`visible` writes every such character as a visible, inert escape,
``⟨U+202E⟩``, so what a person reads is what the agent sent. Markup (``<b>``) is left as text:
escaping it is the job of whatever renders HTML (the console's templates), and a plain-text
prompt shows it as the characters it is.

This is the one home of the rule: every view and every transport's approval prompt (MCP
elicitation, A2A ``INPUT_REQUIRED``, the page, the in-process approvers) shows agent text
through it, by way of :meth:`~.approval.ApprovalRequest.text` and
:meth:`~.approval.ApprovalRequest.to_json`.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["HIDDEN_CATEGORIES", "visible", "visible_value"]

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})
"""Unicode general categories written as escapes: controls (C0, C1 with U+0085, newline,
tab), format characters (the bidi embeddings, overrides and isolates U+202A…U+202E,
U+2066…U+2069, zero-width characters, U+FEFF), the line and paragraph separators, private-use,
surrogate and unassigned code points."""


def visible(text: str) -> str:
    """``text`` with every character of :data:`HIDDEN_CATEGORIES` written as ``⟨U+XXXX⟩``.

    Everything else, markup and non-Latin scripts included, is kept as it is. A string with
    nothing to escape is returned unchanged (the common case costs one ``isprintable``).

    Example:
        >>> visible("report\\u202eexe.txt")
        'report⟨U+202E⟩exe.txt'
        >>> visible("one\\ntwo")
        'one⟨U+000A⟩two'
    """
    if text.isprintable():
        return text
    return "".join(
        f"⟨U+{ord(ch):04X}⟩" if unicodedata.category(ch) in HIDDEN_CATEGORIES else ch for ch in text
    )


def visible_value(value: Any) -> Any:
    """JSON data with every string in it (object keys too) made :func:`visible`.

    Example:
        >>> visible_value({"title": "a\\u2028b", "n": 3})
        {'title': 'a⟨U+2028⟩b', 'n': 3}
    """
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible(str(k)): visible_value(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, list | tuple):
        return [visible_value(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value
