"""The console: a page for the person who answers agents, shipped with the package.

``foldkit-agent serve ... --console`` serves it at ``/console`` on the server's one port,
beside MCP, A2A and the page. It shows the calls waiting for a person on every transport (the
capability's title, the caller, what it does, and the preview as a line diff of what the agent
sees), the activity (people and agents, refusals folded so real actions stay in view) and the
current context, all live; and it takes the person's answer: approve, or decline (with a
message for the agent where the runtime carries one).

With tokens a person signs in once (:mod:`foldkit_agent.adapters.web.signin`) and answers only
what :class:`~foldkit_agent.adapters.web.signin.ApproverPolicy` allows. Pages are rendered
with Jinja2 (autoescaped) from the package's ``templates/``; ``static/`` holds its stylesheet
and script.

Example::

    app = console_app(runtime, calls=calls, tokens=TokenTable({...}))
"""

from __future__ import annotations

from .app import CONSOLE_PATH, CONSOLE_STREAMS, console_app

__all__ = ["CONSOLE_PATH", "CONSOLE_STREAMS", "console_app"]
