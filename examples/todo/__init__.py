"""The todo example: an Elm-architecture app whose Messages an agent can use."""

from .app import App, Model, Todo, TodoMessage, update
from .contract import AppAgent, TodoAgent, User, principal
from .host import run_todo, runtime

__all__ = [
    "App",
    "AppAgent",
    "Model",
    "Todo",
    "TodoAgent",
    "TodoMessage",
    "User",
    "principal",
    "run_todo",
    "runtime",
    "update",
]
