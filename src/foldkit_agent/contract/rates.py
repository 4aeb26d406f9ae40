"""A declared rate (``agent.variant(..., rate="10/minute")``, ``serve --rate-limit``), parsed
once where it is declared with the ``limits`` library's own parser."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import needs_extra

__all__ = ["Rate", "parse_rate"]


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate as declared and as ``limits`` counts it.

    Attributes:
        text: as written (``"10/minute"``); what the manifest records.
        item: the ``limits`` rate item.
        amount: how many in one window.
        per: the window in words (``"minute"``, ``"10 seconds"``).
    """

    text: str
    item: Any
    amount: int
    per: str


def parse_rate(text: str) -> Rate:
    """``text`` as a :class:`Rate`: ``N/second``, ``N/minute``, ``N/hour``, ``N/day`` (or any
    rate ``limits`` reads, such as ``"100 per 10 seconds"``).

    Raises:
        ValueError: ``text`` is not one rate (the message shows the form).
        MissingExtra: the ``limits`` library is not installed.

    Example:
        >>> parse_rate("10/minute").per
        'minute'
    """
    with needs_extra("foldkit_agent.contract.rates"):
        from limits import parse

    try:
        item: Any = parse(text) if isinstance(text, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
    except ValueError:
        item = None
    if item is None or item.amount < 1:
        raise ValueError(
            f"a rate is N/second, N/minute, N/hour or N/day (such as '10/minute'), got {text!r}"
        )
    name = item.GRANULARITY.name
    per = name if item.multiples == 1 else f"{item.multiples} {name}s"
    return Rate(text, item, int(item.amount), per)
