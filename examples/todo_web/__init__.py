"""The todo application as a live web page that a person and a browser agent share.

    python -m examples.todo_web            # http://127.0.0.1:8765/

See :mod:`examples.todo_web.server` for the pieces (``todo_web``, ``build_app``,
``create_app``).
"""

from .server import DEMO_USER, TodoWeb, build_app, create_app, todo_web

__all__ = ["DEMO_USER", "TodoWeb", "build_app", "create_app", "todo_web"]
