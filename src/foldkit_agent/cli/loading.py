"""What every command shares: ``MODULE:ATTR`` references and one-line usage errors."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from typing import Annotated, Any, NoReturn, cast

import typer
from rich.console import Console
from rich.markup import escape

from ..contract.declare import AgentDefinition
from ..errors import closest

EXIT_USAGE = 2
"""Exit status of a command that could not run (bad arguments, files or references)."""

_err = Console(stderr=True, highlight=False, soft_wrap=True)

TargetArg = Annotated[
    str,
    typer.Argument(
        metavar="MODULE:ATTR",
        help="The agent definition to read, such as examples.todo:AppAgent.",
        show_default=False,
    ),
]
"""A ``MODULE:ATTR`` argument naming an agent definition."""


def fail(message: str) -> NoReturn:
    """Print ``error: message`` (one line, on standard error) and exit with status 2."""
    _err.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(EXIT_USAGE)


class TargetError(Exception):
    """A ``MODULE:ATTR`` reference that cannot be loaded; the message is one clear line."""


def load_attr(reference: str, *, like: str = "examples.todo:AppAgent") -> Any:
    """Import ``MODULE`` (the current directory is importable) and return its ``ATTR``.

    ``ATTR`` may be dotted (``module:obj.attr``). ``like`` is the example the malformed-reference
    error shows (the kind of object the command wants).

    Raises:
        TargetError: the reference is malformed, the module cannot be imported, or it has no
            such attribute.
    """
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise TargetError(f"expected MODULE:ATTR (like {like}), got {reference!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            here = (m.name for m in pkgutil.iter_modules([cwd]))
            close = closest(exc.name, here)
            hint = "" if close is None else f"; did you mean {close!r}?"
            raise TargetError(
                f"cannot import module {module_name!r}: no such module in {cwd} or on "
                "PYTHONPATH; run the command from the folder that holds it, or add that "
                f"folder to PYTHONPATH{hint}"
            ) from exc
        raise TargetError(
            f"cannot import module {module_name!r}: it needs {exc.name!r}, which is missing"
        ) from exc
    except SystemExit as exc:
        raise TargetError(f"importing {module_name!r} exited (code {exc.code})") from None
    except Exception as exc:
        raise TargetError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            close = closest(part, (n for n in dir(value) if not n.startswith("_")))
            hint = "" if close is None else f"; did you mean {close!r}?"
            raise TargetError(f"module {module_name!r} has no attribute {attr!r}{hint}") from None
    return value


def load_definition(reference: str) -> AgentDefinition:
    """Load the :class:`~foldkit_agent.contract.AgentDefinition` named by ``MODULE:ATTR``.

    Raises:
        TargetError: the reference cannot be loaded, or names something that is not an
            agent definition (the message is one line, for the terminal).

    Example:
        >>> load_definition("examples.todo:AppAgent").capabilities[0].name
        'create_todo'
    """
    value = load_attr(reference)
    if not isinstance(value, AgentDefinition):
        kind = type(value).__name__  # pyright: ignore[reportUnknownArgumentType]
        raise TargetError(
            f"{reference} is not an agent definition (the result of agent.make(...)); "
            f"its type is {kind}"
        )
    return cast(AgentDefinition, value)  # what was loaded names no Model or principal type


def definition_or_fail(reference: str) -> AgentDefinition:
    """:func:`load_definition`, or a one-line error and exit status 2."""
    try:
        return load_definition(reference)
    except TargetError as exc:
        fail(str(exc))
