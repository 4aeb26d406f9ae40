"""The ``foldkit-agent`` command (Typer + Rich).

Each group of commands lives in its own module and registers itself on :data:`app`:
``contract_cmds`` (manifest, docs, check), ``serve`` (serve), ``demo`` (demo) and
``native`` (native ...).
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="foldkit-agent",
    help="Serve an Elm-architecture application's agent contract, and check it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

from . import contract_cmds as contract_cmds  # noqa: E402  (each module registers commands)
from . import demo as demo  # noqa: E402
from . import native as native  # noqa: E402
from . import serve as serve  # noqa: E402


def main() -> None:
    """Entry point of the ``foldkit-agent`` console script."""
    app()
