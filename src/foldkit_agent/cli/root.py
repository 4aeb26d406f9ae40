"""The ``foldkit-agent`` command's Typer app (the ``cli`` extra: Typer + Rich).

Each group of commands lives in its own module and registers itself on :data:`app` with
``@app.command(cls=Command)``: ``contract_cmds`` (manifest, docs, check), ``serve`` (serve),
``demo`` (demo) and ``native`` (native ...).
"""

from __future__ import annotations

from typing import Any

from .. import __version__
from ..errors import needs_extra

# the package's name keys the extra: without it, one line names it (see ``main``)
with needs_extra("foldkit_agent.cli"):
    import typer
    from typer.core import TyperCommand, TyperGroup, TyperOption


def _bare_flags(params: list[Any]) -> list[Any]:
    """Flags (``--serve``, ``--help``) take no value, so their help shows no ``<bool>``."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


class Command(TyperCommand):
    """A command whose help lists flags without a value placeholder."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _bare_flags(list(super().get_params(ctx)))


class Group(TyperGroup):
    """A command group whose help lists flags without a value placeholder."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _bare_flags(list(super().get_params(ctx)))


app = typer.Typer(
    name="foldkit-agent",
    cls=Group,
    help="Serve an Elm-architecture application's agent contract, and check it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"foldkit-agent {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_print_version,
        help="Print the version and exit.",
    ),
) -> None:
    """Serve an Elm-architecture application's agent contract, and check it."""


with needs_extra("foldkit_agent.cli"):  # each module registers its commands on ``app``
    from . import contract_cmds as contract_cmds
    from . import demo as demo
    from . import native as native
    from . import serve as serve


def main() -> None:
    """Run the Typer app (``python -m foldkit_agent``, ``python -m foldkit_agent.cli`` and the
    console script reach it through :func:`foldkit_agent.__main__.main`, which answers a
    missing ``cli`` extra in one line)."""
    app()
