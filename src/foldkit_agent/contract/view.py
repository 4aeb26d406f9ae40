"""The application's view, as a contract may declare it for hosts that render one.

An MCP Apps host (a chat client) renders a server's ``ui://`` resource in a sandboxed frame
next to the conversation; a person's click there and the model's call are the same
capability, the same Message, through the same checks. :func:`view` declares that view:
generated (the context as readable data, each capability as a form built from its input
schema, a refusal shown under its form) or the application's own HTML. Which protocol serves
it is the adapters' business; nothing here runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import AgentContractError

__all__ = ["View", "view"]

_ORIGIN: Final = re.compile(r"^(https|wss)://(\*\.)?[A-Za-z0-9.-]+(:[0-9]{1,5})?$")
"""An origin a view may reach: https or wss, a host (a leading ``*.`` for its subdomains)
and an optional port; no path, so a CSP source means exactly what it says."""

TITLE_MAX: Final = 120


@dataclass(frozen=True)
class View:
    """A declared view; build it with :func:`view`.

    Attributes:
        title: the view's heading (``None``: the generated view names none).
        html: the application's own HTML document, or ``None`` for the generated view.
        app_only: names of the capabilities only a person in the view may press (resolved at
            ``make``); a host hides them from its model.
        connect_domains: origins the view's own HTML may connect to (CSP ``connect-src``).
        resource_domains: origins it may load scripts, styles, images and fonts from.
    """

    title: str | None
    html: str | None
    app_only: frozenset[str]
    connect_domains: tuple[str, ...]
    resource_domains: tuple[str, ...]
    refs: tuple[Any, ...] = ()

    def resolved(self, by_name: Mapping[str, Any], lookup: Callable[[Any], Any]) -> View:
        """This view with ``app_only`` as capability names of the contract ``make`` builds.

        Raises:
            AgentContractError: an app-only entry names no exposed capability.
        """
        names: set[str] = set()
        for ref in self.refs:
            cap = lookup(ref)
            if cap is None:
                shown = getattr(ref, "__name__", ref)
                raise AgentContractError(
                    f"view(app_only=...) names {shown!r}, which the contract does not expose; "
                    f"name one of {', '.join(sorted(by_name)) or 'its capabilities'}"
                )
            names.add(cap.name)
        return View(
            self.title, self.html, frozenset(names), self.connect_domains, self.resource_domains
        )


def _origins(given: Iterable[str], what: str) -> tuple[str, ...]:
    found = tuple(given)
    for origin in found:
        if not isinstance(origin, str) or not _ORIGIN.match(origin):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentContractError(
                f"view({what}=...) takes origins such as 'https://api.example.com' (https or "
                f"wss, no path); {str(origin)[:80]!r} is not one"
            )
    return found


def view(
    *,
    title: str | None = None,
    html: str | None = None,
    app_only: Iterable[Any] = (),
    connect_domains: Iterable[str] = (),
    resource_domains: Iterable[str] = (),
) -> View:
    """Declare the application's view (give it to ``make(view=...)``).

    Args:
        title: the heading of the generated view (one line, at most 120 characters).
        html: the application's own HTML document (a whole page, scripts inline); ``None``
            serves the generated view, which reads the context, offers every capability as a
            form and calls it through the host (``@modelcontextprotocol/ext-apps``' ``App``).
        app_only: capabilities (Message classes or names) only a person in the view may press;
            the host does not offer them to its model. They are checked like any other call.
        connect_domains: origins your own HTML connects to; default none.
        resource_domains: origins your own HTML loads scripts, styles or images from.

    Returns:
        A :class:`View`.

    Raises:
        AgentContractError: a title with a line break or over 120 characters, an ``html``
            that is not a string, or an origin that is not ``https://host`` / ``wss://host``
            (``make`` also refuses an app-only entry the contract does not expose).

    Example:
        >>> AppAgent = TodoAgent.make(
        ...     context=projection.pick(App.model.todos),
        ...     messages=TodoAgent.expose(TodoMessage, {...}),
        ...     view=agent.view(title="Todos", app_only=[RequestedClearCompleted]),
        ... )
    """
    if title is not None and (
        not isinstance(title, str) or len(title) > TITLE_MAX or not title.isprintable()  # pyright: ignore[reportUnnecessaryIsInstance]
    ):
        raise AgentContractError(
            f"view(title=...) takes one printable line of at most {TITLE_MAX} characters"
        )
    if html is not None and not isinstance(html, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("view(html=...) takes the HTML document as a string")
    refs = tuple(app_only)
    return View(
        title,
        html,
        frozenset(),
        _origins(connect_domains, "connect_domains"),
        _origins(resource_domains, "resource_domains"),
        refs,
    )
