"""``serve --mcp stdio``: standard output is the wire, so nothing else may write to it.

While the user's module is imported, and while its application starts and stops, whatever it
prints goes to standard error (:class:`StdoutToStderr`); the stdio transport claims the real
standard output for as long as it serves.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, cast

from ... import __version__
from ...edge.startup import freeze_startup
from ...runtime.bound import AgentRuntime
from .options import ServeOptions

if TYPE_CHECKING:
    from ...adapters.mcp.listing import Listing
    from ...adapters.mcp.local import LocalUser

__all__ = ["NoGuard", "StdoutGuard", "StdoutToStderr", "serve_stdio", "stdout_guard"]


class StdoutToStderr:
    """While inside, file descriptor 1 (and so ``print``) writes to standard error.

    ``lifted()`` gives the real standard output back for a moment (to the stdio transport,
    which claims it as the wire and diverts stray writes itself while serving).
    """

    def __enter__(self) -> StdoutToStderr:
        sys.stdout.flush()
        self._saved = os.dup(1)
        os.dup2(2, 1)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(self._saved, 1)
        os.close(self._saved)

    @contextlib.contextmanager
    def lifted(self) -> Generator[None]:
        sys.stdout.flush()
        os.dup2(self._saved, 1)
        try:
            yield
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
            os.dup2(2, 1)


class NoGuard:
    """The guard of the HTTP adapters, which leave standard output alone."""

    def __enter__(self) -> NoGuard:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @contextlib.contextmanager
    def lifted(self) -> Generator[None]:
        yield


StdoutGuard = StdoutToStderr | NoGuard


def stdout_guard(options: ServeOptions) -> StdoutGuard:
    """What keeps stray writes off the wire: over stdio, :class:`StdoutToStderr`."""
    return StdoutToStderr() if options.mcp == "stdio" else NoGuard()


async def serve_stdio(
    rt: AgentRuntime[Any, Any], options: ServeOptions, guard: StdoutGuard
) -> None:
    """MCP over this process's stdio, every call carrying ``options.local_user`` as its
    credentials."""
    from ...adapters.mcp import mcp_server
    from ...adapters.mcp import serve_stdio as serve_mcp_stdio

    user = options.local_user

    def local_user(_request_context: Any) -> LocalUser | None:
        return user

    freeze_startup()  # what the runtime and the imports allocated is never rescanned
    with guard.lifted():  # serve_stdio claims the real stdout as its wire
        server = mcp_server(
            rt,
            name=options.server_name,
            version=__version__,
            credentials_of=local_user,
            listing=cast("Listing", options.mcp_listing),
            progress_interval=options.progress_interval,
        )
        await serve_mcp_stdio(server)
