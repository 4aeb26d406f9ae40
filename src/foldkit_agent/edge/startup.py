"""Start-up that leaves the garbage collector nothing to rescan.

A server allocates most of its long-lived objects while it starts: the imported modules, the
contract's schemas and strict decoders, the SDKs' servers and routes. CPython's full
collections walk every tracked object each time, so on a busy server each one rescans all of
start-up for nothing; measured, they were the whole p99 tail of ``tools/call`` (35-38 full
collections per 10 s run, 32-45 ms each). :func:`freeze_startup` collects once and then moves
every survivor into the collector's permanent generation (:func:`gc.freeze`), which later
collections skip; objects allocated afterwards are collected as before.

``foldkit-agent serve`` does this once its apps have started (:func:`frozen_lifespan` around the
combined app's lifespan over HTTP; before serving over stdio). An application that embeds the
adapters' Starlette apps does the same with :func:`frozen_lifespan`::

    app = mcp_app(runtime)
    app.router.lifespan_context = frozen_lifespan(app.router.lifespan_context)

or, for its own Starlette app, ``Starlette(routes=..., lifespan=frozen_lifespan(lifespan))``.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeAlias

__all__ = ["Lifespan", "freeze_startup", "frozen_lifespan"]

Lifespan: TypeAlias = Callable[[Any], AbstractAsyncContextManager[Any]]
"""A Starlette lifespan: ``(app) -> async context manager`` (yielding ``None`` or a state)."""


def freeze_startup() -> int:
    """Collect once, then freeze every object the collector tracks (:func:`gc.freeze`).

    Call it when start-up is over and before serving. Frozen objects are never scanned again
    (nor freed while frozen); :func:`gc.unfreeze` hands them back to the collector.

    Returns:
        How many objects are frozen now (:func:`gc.get_freeze_count`).

    Example:
        >>> freeze_startup() > 0
        True
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def frozen_lifespan(lifespan: Lifespan | None = None) -> Lifespan:
    """A Starlette lifespan that runs ``lifespan``'s start-up, then :func:`freeze_startup`.

    On shutdown it unfreezes (so what start-up allocated can be freed again, e.g. when a test
    starts and stops apps many times), then runs ``lifespan``'s shutdown.

    Args:
        lifespan: the app's own lifespan (``app.router.lifespan_context``), or ``None``.

    Returns:
        A lifespan for ``Starlette(lifespan=...)`` or ``app.router.lifespan_context``; it
        yields what ``lifespan`` yields (its state, if any).

    Example:
        >>> app.router.lifespan_context = frozen_lifespan(app.router.lifespan_context)
    """

    @asynccontextmanager
    async def frozen(app: Any) -> AsyncGenerator[Any]:
        if lifespan is None:
            freeze_startup()
            try:
                yield None
            finally:
                gc.unfreeze()
            return
        async with lifespan(app) as state:
            freeze_startup()
            try:
                yield state
            finally:
                gc.unfreeze()

    return frozen
