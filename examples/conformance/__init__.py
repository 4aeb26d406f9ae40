"""The MCP conformance suite's fixtures as an Elm-architecture app (``make conformance``)."""

from .app import App, Model, update
from .contract import ConformanceAgent
from .host import runtime

__all__ = ["App", "ConformanceAgent", "Model", "runtime", "update"]
