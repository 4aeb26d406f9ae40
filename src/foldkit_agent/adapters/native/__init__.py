"""The Agent Native adapter: generated actions and the MCP config entry.

Modules: :mod:`.codegen` (``actions/<name>.ts`` rendering and writing), :mod:`.config`
(:func:`mcp_config`), :mod:`.endpoint` (:func:`native_app`, the HTTP side the actions call).
"""

from __future__ import annotations

from ...errors import needs_extra

with needs_extra(__name__):  # a missing library is answered with the extra to install
    from . import codegen, config
    from .codegen import *  # noqa: F403
    from .config import *  # noqa: F403
    from .endpoint import NativeCaller, native_app, native_caller

# The generated actions' and the config entry's names as their modules list them, then the
# endpoint's public three (its token minimum and hook type stay in .endpoint).
__all__: list[str] = ["NativeCaller", "native_app", "native_caller"]
__all__ += codegen.__all__
__all__ += config.__all__
