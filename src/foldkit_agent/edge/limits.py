"""Reading a request body within a byte limit, and draining what a refused request still sends.

:func:`read_capped` reads an ASGI request body chunk by chunk and stops as soon as it grows
past the limit, whatever ``Content-Length`` said (a chunked body has none).

:func:`drain` exists for the answer to arrive: a server that answers and closes while the
client is still writing its body makes the kernel reset the connection, and a client that
writes its whole body before reading (most HTTP libraries do) then sees the reset instead of
the answer. So before a refusal is sent, what remains of the body is read and thrown away, as
long as the whole body stays within a fixed budget: :data:`PREAUTH_DRAIN` bytes for a request
refused before it was authenticated (steps 1 to 3: O(1) work for an anonymous caller), and
twice the route's byte limit for a body refused at steps 4 and 5, so a body up to twice the
limit still receives its 413. A body larger than that (by its ``Content-Length``, or once it
has streamed past the budget) is not read further; the answer carries ``Connection: close``.
A client that sent ``Expect: 100-continue`` is never drained: it waits for the answer before
sending anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from starlette.datastructures import Headers
from starlette.types import Message, Receive

__all__ = ["BODY_METHODS", "PREAUTH_DRAIN", "Body", "declared_length", "drain", "read_capped"]

PREAUTH_DRAIN: Final = 64 * 1024
"""Most bytes read and discarded from a request refused before authentication."""

BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})
"""Methods whose body the guard reads, checks and parses."""


@dataclass(slots=True)
class Body:
    """What has been read of one request body.

    Attributes:
        data: the bytes read so far.
        complete: the client sent the last chunk (``more_body`` false).
        trailing: an ``http.disconnect`` (or other) message received before the end, if any.
    """

    data: bytearray = field(default_factory=bytearray)
    complete: bool = False
    trailing: Message | None = None


def declared_length(value: str | None) -> int | None:
    """A ``Content-Length`` value as an integer; ``None`` when absent.

    Raises:
        ValueError: the header is not a non-negative decimal number.
    """
    if value is None:
        return None
    raw = value.strip()
    if not raw.isascii() or not raw.isdigit() or len(raw) > 19:
        raise ValueError("bad Content-Length")
    return int(raw)


async def read_capped(receive: Receive, limit: int, body: Body) -> bool:
    """Read the rest of the body into ``body``; ``False`` as soon as it exceeds ``limit`` bytes.

    Returns ``True`` when the body ended (or the client went away: ``body.trailing``) within
    the limit.
    """
    while not body.complete and body.trailing is None:
        message = await receive()
        if message["type"] != "http.request":
            body.trailing = message
            return True
        body.data += message.get("body", b"")
        body.complete = not message.get("more_body", False)
        if len(body.data) > limit:
            return False
    return True


async def drain(receive: Receive, headers: Headers, body: Body, budget: int) -> bool:
    """Read and discard the rest of the body while the whole of it stays within ``budget``.

    Returns:
        ``True`` when the whole body has been received (the connection can be reused);
        ``False`` when it was too large, the client asked for ``100-continue`` or went away
        (answer with ``Connection: close``).
    """
    if body.complete:
        return True
    if body.trailing is not None or "100-continue" in headers.get("expect", "").lower():
        return False
    try:
        declared = declared_length(headers.get("content-length"))
    except ValueError:
        return False
    if declared is not None and declared > budget:
        return False  # it will not fit: do not read any more of it
    read = len(body.data)
    while True:
        message = await receive()
        if message["type"] != "http.request":
            body.trailing = message
            return False
        read += len(message.get("body", b""))
        if read > budget:
            return False
        if not message.get("more_body", False):
            body.complete = True
            return True
