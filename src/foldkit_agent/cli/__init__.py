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

from . import contract_cmds, demo, native, serve  # noqa: E402,F401  (they register commands)


def main() -> None:
    """Entry point of the ``foldkit-agent`` console script."""
    app()
