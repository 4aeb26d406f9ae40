"""The ``foldkit-agent serve`` command: its flags (``flags.py``, grouped in ``--help``) made
into one :class:`~.options.ServeOptions`, then served (``main.py``)."""

from __future__ import annotations

from typing import Any

import typer

from ..loading import fail
from ..root import Command, app
from .flags import options_from, with_flags
from .main import run

__all__ = ["serve"]


@app.command(cls=Command)
@with_flags
def serve(
    target: str = typer.Argument(
        ...,
        metavar="MODULE:ATTR",
        help="A runtime factory (like examples.todo:runtime) or a bound AgentRuntime; "
        "see docs/serving.md",
        show_default=False,
    ),
    **flags: Any,
) -> None:
    """Serve an application's agent contract over MCP, A2A and WebMCP."""
    try:
        options = options_from(target, flags)
    except ValueError as err:
        fail(str(err))
    run(options)
