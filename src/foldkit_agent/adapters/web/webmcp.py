"""WebMCP: offer the capabilities as tools of a web page, with the server as the authority.

The page loads a small bridge script (``/agent/webmcp.js``, shipped with this package). The
bridge lists the available capabilities from the JSON surface of :mod:`.surface`,
registers each with ``document.modelContext.registerTool(tool, {signal})`` (falling back to
``navigator.modelContext``), aborts and re-registers when the server's event stream reports
a change, and forwards every ``execute`` to ``POST /agent/invoke/<name>``. Validation,
availability, authorization and audit all happen on the server; the bridge decides nothing.

Browsers: Chromium with ``--enable-features=WebMCP`` has ``document.modelContext``; other
browsers need a polyfill such as ``@mcp-b/global`` loaded before the bridge. The WebMCP draft
(W3C Web Machine Learning CG, ``webmachinelearning/webmcp``) scopes tools to a secure context
(``https://`` or loopback ``http://``).

Typical use, in an application that already has a Starlette app and a session::

    from foldkit_agent.adapters.web import webmcp

    app = Starlette(routes=[
        Route("/", homepage),                      # its HTML includes webmcp.script_tag()
        webmcp.mount(runtime, credentials_of=user_from_session, session_of=session_id),
    ])

or, for a runtime without a page of its own, :func:`webmcp_app` serves a plain page too.
"""

from __future__ import annotations

import html
from functools import cache
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route, request_response

from ...edge.guard import EdgeGuard, Rules
from ...edge.hosts import HostPolicy
from ...edge.options import DEFAULT_HTTP_OPTIONS, HttpOptions
from .signin import SIGN_IN_PAGE, People
from .surface import DEFAULT_MAX_BODY, SurfaceTarget, agent_surface

__all__ = ["BRIDGE_FILE", "bridge_script", "mount", "script_tag", "webmcp_app", "webmcp_surface"]

BRIDGE_FILE = "webmcp.js"
"""The bridge's file name under the surface's mount point (``/agent/webmcp.js``)."""


@cache
def bridge_script() -> str:
    """The bridge's JavaScript source (package data ``adapters/static/webmcp.js``)."""
    return (
        resources.files(__package__ or "foldkit_agent.adapters")
        .joinpath("static", BRIDGE_FILE)
        .read_text(encoding="utf-8")
    )


async def _serve_bridge(_request: Request) -> Response:
    return Response(
        bridge_script(),
        media_type="text/javascript; charset=utf-8",
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


def webmcp_surface(target: SurfaceTarget, **surface: Any) -> Starlette:
    """The JSON surface plus the bridge script, as one app to mount (at ``/agent``).

    Args:
        target: a bound runtime or ``resolve(request) -> AgentRuntime``.
        **surface: keyword arguments of :func:`foldkit_agent.adapters.web.surface.agent_surface`
            (``credentials_of``, ``session_of``, ``service_auth``, ``options``, ...);
            ``transport`` defaults to ``"webmcp"``.

    Returns:
        A Starlette app with ``GET webmcp.js`` and every route of the JSON surface.
    """
    api = agent_surface(target, **surface)
    return Starlette(
        routes=[Route(f"/{BRIDGE_FILE}", _serve_bridge, methods=["GET"]), Mount("", app=api)]
    )


def mount(target: SurfaceTarget, *, path: str = "/agent", **surface: Any) -> Mount:
    """A Starlette ``Mount`` serving the bridge and the JSON surface under ``path``.

    Example:
        >>> app = Starlette(routes=[Route("/", page), webmcp.mount(runtime, credentials_of=who)])
    """
    return Mount(path.rstrip("/") or "/", app=webmcp_surface(target, **surface))


def script_tag(path: str = "/agent") -> str:
    """The ``<script>`` element a page includes to load the bridge from ``path``.

    Load a polyfill (if any) before it. Example: ``script_tag()`` →
    ``<script src="/agent/webmcp.js" defer></script>``.
    """
    src = html.escape(f"{path.rstrip('/')}/{BRIDGE_FILE}", quote=True)
    return f'<script src="{src}" defer></script>'


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
{head}
<style>
body {{ font: 16px/1.4 system-ui, sans-serif; margin: 2rem auto; max-width: 48rem; }}
pre {{ background: #f4f4f4; padding: 1rem; overflow: auto; }}
li code {{ font-weight: 600; }}
.approval {{ border: 2px solid #c80; border-radius: 6px; padding: .6rem; margin: .6rem 0; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p>The tools below are registered with this page's WebMCP context for a browser agent.</p>
<section id="approvals" data-testid="approvals" aria-live="assertive" hidden>
<h2>An agent asks for your approval</h2>
<div id="approval-list"></div>
</section>
<h2>Tools</h2>
<ul id="tools"></ul>
<h2>Context</h2>
<pre id="context">loading…</pre>
<script>
(function () {{
  var base = {base_json};
  function renderTools() {{
    var ul = document.getElementById("tools");
    ul.replaceChildren();
    (window.foldkitAgent ? window.foldkitAgent.tools() : []).forEach(function (name) {{
      var li = document.createElement("li");
      var code = document.createElement("code");
      code.textContent = name;
      li.appendChild(code);
      ul.appendChild(li);
    }});
  }}
  async function renderContext() {{
    try {{
      var r = await fetch(base + "/context", {{credentials: "same-origin", cache: "no-store"}});
      var body = await r.json();
      document.getElementById("context").textContent = JSON.stringify(body.context, null, 2);
    }} catch (e) {{}}
  }}
  // A call of a confirm capability waits until the person here approves or declines it.
  async function answer(id, approve) {{
    var s = await (await fetch(base + "/session", {{credentials: "same-origin"}})).json();
    var headers = {{"content-type": "application/json"}};
    headers[s.csrfHeader] = s.csrfToken;
    await fetch(base + "/approvals/" + encodeURIComponent(id), {{
      method: "POST", credentials: "same-origin", headers: headers,
      body: JSON.stringify({{approve: approve}}),
    }});
  }}
  function button(label, id, approve) {{
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.addEventListener("click", function () {{ answer(id, approve); }});
    return b;
  }}
  function renderApprovals(waiting) {{
    var list = document.getElementById("approval-list");
    list.replaceChildren();
    waiting.forEach(function (req) {{
      var box = document.createElement("div");
      box.className = "approval";
      box.dataset.testid = "approval";
      var text = document.createElement("pre");
      text.textContent = req.text;
      box.append(text, button("Approve", req.id, true), button("Decline", req.id, false));
      list.append(box);
    }});
    document.getElementById("approvals").hidden = waiting.length === 0;
  }}
  window.addEventListener("foldkit-agent:sync", renderTools);
  function listen() {{
    var events = new EventSource(base + "/events");
    events.addEventListener("ready", renderContext);
    events.addEventListener("change", renderContext);
    events.addEventListener("approvals", function (ev) {{
      renderApprovals(JSON.parse(ev.data).approvals);
    }});
  }}
  // The session first (its cookie), so the events of this page's own approvals reach it.
  fetch(base + "/session", {{credentials: "same-origin"}}).then(listen, listen);
}})();
</script>
{bridge}
</body>
</html>
"""


def webmcp_app(
    target: SurfaceTarget,
    *,
    title: str = "foldkit-agent",
    path: str = "/agent",
    head_scripts: tuple[str, ...] = (),
    options: HttpOptions = DEFAULT_HTTP_OPTIONS,
    people: People | None = None,
    **surface: Any,
) -> Starlette:
    """A complete app: a plain page at ``/`` that shows the context and loads the bridge,
    plus the surface under ``path``. What ``foldkit-agent serve ... --webmcp`` can serve for
    a runtime that has no page of its own.

    Args:
        target: a bound runtime or ``resolve(request) -> AgentRuntime``.
        title: the page title.
        path: where the surface is mounted.
        head_scripts: script URLs loaded before the bridge (a WebMCP polyfill, say).
        options: what every HTTP adapter of the server shares
            (:class:`~foldkit_agent.edge.HttpOptions`): the page at ``/`` holds to its
            ``allowed_hosts``, the surface reads it as
            :func:`~foldkit_agent.adapters.web.surface.agent_surface` does.
        people: with sign-in (:class:`~foldkit_agent.adapters.web.signin.People`), the page
            answers only a signed-in person (``GET /`` redirects to the console's sign-in)
            and the surface takes its session and credentials from them, so a browser
            agent's calls carry the person; ``None``: no sign-in (serve it on loopback only).
        **surface: the other keywords of :func:`webmcp_surface`.

    Returns:
        A Starlette app: ``GET /`` and the surface's routes under ``path``.

    Raises:
        ValueError: as :func:`~foldkit_agent.adapters.web.surface.agent_surface`.

    Example:
        >>> shared = HttpOptions(caps=CallerLimits(page_streams=8))
        >>> app = webmcp_app(rt, title="Todos", options=shared)
    """
    import json

    base = path.rstrip("/")
    head = "\n".join(
        f'<script src="{html.escape(src, quote=True)}"></script>' for src in head_scripts
    )
    page = _PAGE.format(
        title=html.escape(title),
        head=head,
        base_json=json.dumps(base),
        bridge=script_tag(base),
    )

    async def homepage(request: Request) -> Response:
        if people is not None and people.session_of(request) is None:
            return RedirectResponse(SIGN_IN_PAGE, status_code=303)
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    if people is not None:
        surface.setdefault("session_of", people.session_of)
        surface.setdefault("credentials_of", people.credentials_of)

    # The page passes the same edge guard as the surface: the one Host policy (a GET page
    # takes no credentials and no body).
    guarded = EdgeGuard(
        request_response(homepage),
        hosts=HostPolicy(options.allowed_hosts),
        classify=Rules(origin="none", body=False),
        max_body=DEFAULT_MAX_BODY,
    )
    return Starlette(
        routes=[
            Route("/", guarded, methods=["GET"]),
            mount(target, path=base, options=options, **surface),
        ]
    )
