"""The ``foldkit-agent`` command.

Its Typer app lives in :mod:`.root`, which needs the ``cli`` extra; this package imports
none of it, so ``python -m foldkit_agent.cli`` on a core install reaches
:func:`foldkit_agent.__main__.main`, which names that extra in one line instead of a
traceback. ``from foldkit_agent.cli import app`` still gives the Typer app (imported then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .root import app as app


def main() -> None:
    """Run the ``foldkit-agent`` command, as the console script does; without the ``cli``
    extra, print one line naming it and exit with status 2.

    Example:
        >>> from foldkit_agent.cli import main
        >>> main()  # doctest: +SKIP
    """
    from ..__main__ import main as run

    run()


def __getattr__(name: str) -> Any:
    if name == "app":
        from .root import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
