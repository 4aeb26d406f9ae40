"""Resolve ``MODULE:ATTR`` references given on the command line."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any


class TargetError(Exception):
    """A ``MODULE:ATTR`` reference that cannot be loaded; the message is one clear line."""


def load_attr(reference: str) -> Any:
    """Import ``MODULE`` (the current directory is importable) and return its ``ATTR``.

    ``ATTR`` may be dotted (``module:obj.attr``).

    Raises:
        TargetError: the reference is malformed, the module cannot be imported, or it has no
            such attribute.
    """
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise TargetError(f"expected MODULE:ATTR (like examples.todo:AppAgent), got {reference!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise TargetError(f"cannot import module {module_name!r}: no such module") from exc
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
            raise TargetError(f"module {module_name!r} has no attribute {attr!r}") from None
    return value
