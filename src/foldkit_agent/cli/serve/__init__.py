"""``foldkit-agent serve MODULE:ATTR``: serve a bound runtime over the adapters asked for.

The command is split by concern, read top to bottom:

* ``command.py``: the Typer command and its flags, grouped in ``--help``; it builds one
  :class:`ServeOptions` (``options.py``), which checks itself, and hands it to ``run``.
  ``limits.py`` makes the limit flags from the fields of ``CallerLimits`` and
  ``ConnectionLimits``.
* ``main.py``: :func:`run` opens what the options name and runs the event loop;
  ``serve_http`` builds the adapters' apps (``parts.py``: :func:`http_parts`,
  :func:`combine`) on a bound socket and serves them (``server.py``: :func:`bind_socket`,
  :func:`run_http`, the drain).
* ``target.py``: the runtime ``MODULE:ATTR`` names (:func:`open_runtime`); ``stdio.py``: MCP
  over stdio, standard output kept for the wire; ``tenants.py``: ``--tenant-from``;
  ``audit.py``: ``--audit``.
"""

from __future__ import annotations

from .command import serve
from .options import LISTING_MODES, ServeOptions, ServeOptionsError, parse_tokens, token_table
from .parts import HttpPart, combine, http_parts
from .server import bind_socket, run_http
from .target import open_runtime

__all__ = [
    "LISTING_MODES",
    "HttpPart",
    "ServeOptions",
    "ServeOptionsError",
    "bind_socket",
    "combine",
    "http_parts",
    "open_runtime",
    "parse_tokens",
    "run_http",
    "serve",
    "token_table",
]
