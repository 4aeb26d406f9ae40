"""The tagged error family.

Every refusal the runtime can produce is an :class:`AgentError` subclass whose class name is
its *tag* (``"AgentCapabilityUnavailableError"``, ...). Messages are written for the calling
agent: they name the capability and say what to do next, and never carry library text, stack
frames, the Model or echoed input. The original exception, where there is one, stays on
``__cause__`` for the application's own logs.

Errors cross protocol boundaries as JSON::

    >>> err = AgentCapabilityUnavailableError(capability="delete_todo")
    >>> AgentError.from_json(err.to_json()) == err
    True
"""

from __future__ import annotations

import difflib
from collections.abc import Generator, Iterable, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Final, TypedDict

__all__ = [
    "AgentApprovalError",
    "AgentAuthorizationError",
    "AgentCancelledError",
    "AgentCapabilityUnavailableError",
    "AgentCompletionTimeoutError",
    "AgentContractError",
    "AgentError",
    "AgentHostError",
    "AgentIdempotencyError",
    "AgentInvalidInputError",
    "AgentResourceError",
    "AgentUnknownCapabilityError",
    "InputIssue",
    "InputRejected",
    "MissingExtra",
]


class InputIssue(TypedDict):
    """One problem with an invocation's input: ``{"path": "address.zip", "problem": "..."}``.

    ``path`` is dotted (list positions as numbers, ``""`` for the input as a whole).
    """

    path: str
    problem: str


_REGISTRY: dict[str, type[AgentError]] = {}


class AgentError(Exception):
    """Base of every error the contract and its runtime raise.

    Attributes:
        tag: the class name; stable across the wire.
        capability: the capability (or resource) the error is about, or ``None``.
        message: the agent-facing text (also ``str(err)``).
    """

    tag: ClassVar[str] = "AgentError"
    _fields: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.tag = cls.__name__
        if not cls.__name__.startswith("_"):
            _REGISTRY[cls.__name__] = cls

    def __init__(self, message: str, *, capability: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.capability = capability

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{self.tag}(capability={self.capability!r}, message={self.message!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentError):
            return NotImplemented
        return self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash((self.tag, self.capability, self.message))

    def to_json(self) -> dict[str, Any]:
        """The error as a JSON-serialisable dict: ``{"_tag", "capability", "message", ...}``."""
        data: dict[str, Any] = {
            "_tag": self.tag,
            "capability": self.capability,
            "message": self.message,
        }
        for name in self._fields:
            data[name] = getattr(self, name)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentError:
        """Rebuild an error from :meth:`to_json` output.

        Raises:
            ValueError: when ``data["_tag"]`` names no error of this family.
        """
        tag = data.get("_tag")
        target = _REGISTRY.get(tag) if isinstance(tag, str) else None
        if target is None:
            raise ValueError(f"not an agent error tag: {tag!r}")
        err = target.__new__(target)
        AgentError.__init__(err, str(data.get("message", "")), capability=data.get("capability"))
        for name in target._fields:
            setattr(err, name, data.get(name))
        return err


class AgentContractError(AgentError):
    """A declaration is wrong (raised by ``expose``/``make``/``bind``, never by a call).

    Also raised for an invocation when an application hook breaks the contract at run time
    (``to_message`` building a Message of another tag).
    """

    def __init__(self, message: str, *, capability: str | None = None) -> None:
        super().__init__(message, capability=capability)


class _AboutCapability(AgentError):
    """An error whose only detail is the capability: its text is ``TEXT`` naming it."""

    TEXT: ClassVar[str] = ""

    def __init__(self, *, capability: str) -> None:
        super().__init__(self.TEXT.format(capability=capability), capability=capability)


class AgentUnknownCapabilityError(_AboutCapability):
    """No capability has this name. The Model was not read and nothing was dispatched.

    Given the contract's capability names (``known``), the text names the closest one
    (``Did you mean 'delete_todo'?``), since a misspelt name is the usual cause; a name
    longer than any capability name may be is not compared.
    """

    TEXT = (
        "There is no capability named {capability!r}. List the available capabilities and "
        "call one of those."
    )

    def __init__(self, *, capability: str, known: Iterable[str] = ()) -> None:
        super().__init__(capability=capability)
        close = closest(capability, known)
        if close is not None:
            self.message += f" Did you mean {close!r}?"
            self.args = (self.message,)


def closest(name: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``name`` is most likely a misspelling of, or ``None``: the
    one home of every "did you mean" (a capability, a Model field, a ``MODULE:ATTR``).

    A name longer than 128 characters is not compared (no name we look up is that long, and
    the comparison's cost grows with it).

    Example:
        >>> closest("runtme", ["runtime", "AppAgent"])
        'runtime'
    """
    if len(name) > 128:
        return None
    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


class AgentCapabilityUnavailableError(_AboutCapability):
    """The capability exists but its ``available`` predicate is false for the current Model.

    Attributes:
        available_when: the capability's declared ``available_when`` clause (when it is
            available), which the text names as what to do first; ``None`` if none was
            declared.

    Example:
        >>> err = AgentCapabilityUnavailableError(
        ...     capability="delete_todo", available_when="a todo is selected")
        >>> err.message.split("; ")[1][:40]
        'it is available only when a todo is sele'
    """

    _fields = ("available_when",)

    TEXT = (
        "{capability!r} is not available in the application's current state. Read the "
        "context or list the capabilities again before retrying."
    )

    def __init__(self, *, capability: str, available_when: str | None = None) -> None:
        super().__init__(capability=capability)
        self.available_when = available_when
        if available_when is not None:
            self.message = (
                f"{capability!r} is not available in the application's current state; it is "
                f"available only when {available_when}. Make that so first (the context "
                "shows the state), then call it again."
            )
            self.args = (self.message,)


class AgentInvalidInputError(AgentError):
    """The input did not decode against the capability's schema. Nothing was dispatched.

    Attributes:
        issues: ``[{"path": "a.b", "problem": "..."}]``, written by this library.
        accepted: the top-level field names the capability accepts.
    """

    _fields = ("issues", "accepted")

    def __init__(
        self, *, capability: str, issues: Sequence[InputIssue], accepted: Sequence[str]
    ) -> None:
        self.issues: list[InputIssue] = [dict(i) for i in issues]  # type: ignore[misc]
        self.accepted: list[str] = list(accepted)
        described = "; ".join(
            f"{i['path']}: {i['problem']}" if i["path"] else i["problem"] for i in self.issues[:5]
        )
        if len(self.issues) > 5:
            described += f"; and {len(self.issues) - 5} more"
        fields = ", ".join(self.accepted) if self.accepted else "none (send {})"
        super().__init__(
            f"Invalid input for {capability!r}: {described}. Accepted fields: {fields}.",
            capability=capability,
        )


class AgentAuthorizationError(AgentError):
    """The ``authorize`` hook refused this principal. ``reason`` is the hook's own text."""

    _fields = ("reason",)

    def __init__(self, *, capability: str, reason: str | None = None) -> None:
        self.reason = reason
        said = f": {reason}" if reason else "."
        super().__init__(f"Not authorized to use {capability!r}{said}", capability=capability)


_SAID_MAX = 500


def _shown_said(said: str) -> str:
    # a person's words reach the agent as one line of inert text, bounded
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in said).split())
    return text if len(text) <= _SAID_MAX else text[: _SAID_MAX - 1] + "…"


class AgentApprovalError(AgentError):
    """A capability that needs a person's approval was not approved. Nothing was dispatched.

    Attributes:
        reason: ``"declined"`` (the person said no), ``"timeout"`` (nobody answered within
            the approval timeout), ``"unavailable"`` (the transport cannot ask a person:
            the call fails closed rather than approving itself) or ``"stale"`` (the Model
            changed while the person decided, so their approval no longer held).
        said: with ``"declined"``, what the person told the agent (one line, at most 500
            characters), quoted in the text; else ``None``.
        timeout: for ``"timeout"``, the seconds waited; otherwise ``None``.

    ``waiting`` (with ``"unavailable"``) is the cap on calls waiting for approval the
    transport reached (``yours``: the caller's own cap, else the server's); only the text
    names it, the JSON form is the same.

    Example:
        >>> AgentApprovalError(capability="delete_todo", reason="declined").message
        "A person declined the call to 'delete_todo'; nothing was sent. ..."
    """

    _fields = ("reason", "timeout", "said")

    REASONS: ClassVar[tuple[str, ...]] = ("declined", "timeout", "unavailable", "stale")

    def __init__(
        self,
        *,
        capability: str,
        reason: str,
        timeout: float | None = None,
        waiting: int | None = None,
        yours: bool = True,
        said: str | None = None,
    ) -> None:
        if reason not in self.REASONS:
            raise ValueError(f"approval reason must be one of {self.REASONS}, not {reason!r}")
        self.reason = reason
        self.timeout = timeout
        self.said = None if said is None or not said.strip() else _shown_said(said)
        if reason == "unavailable" and waiting is not None and yours:
            text = (
                f"Too many calls of yours are waiting for a person's approval ({waiting}, the "
                f"most one caller may have waiting), so {capability!r} cannot ask one; nothing "
                "was sent. Answer or cancel one of your waiting calls, then call again."
            )
        elif reason == "unavailable" and waiting is not None:
            text = (
                f"Too many calls are waiting for a person's approval on this server ({waiting}, "
                f"the most it keeps waiting), so {capability!r} cannot ask one; nothing was "
                "sent. Retry later."
            )
        elif reason == "declined" and self.said is not None:
            text = (
                f"A person declined the call to {capability!r}; nothing was sent. They said: "
                f"{self.said!r}. Do what they ask instead; do not retry the same call."
            )
        elif reason == "declined":
            text = (
                f"A person declined the call to {capability!r}; nothing was sent. Do not "
                "retry it unless they ask for it again."
            )
        elif reason == "stale":
            text = (
                f"The application changed while a person decided on {capability!r}, so what "
                "they approved no longer holds; nothing was sent. Read the current state and "
                "call again if it is still wanted."
            )
        elif reason == "timeout":
            waited = f" within {timeout:g} s" if timeout is not None else ""
            text = (
                f"Nobody answered the request to approve {capability!r}{waited}; nothing was "
                "sent. Ask the person before trying again."
            )
        else:
            text = (
                f"{capability!r} needs a person's approval, and this connection cannot ask "
                "one (the client offers no way to ask its user); nothing was sent. Use a client "
                "that can ask its user, or let a person do this in the application."
            )
        super().__init__(text, capability=capability)


class AgentCancelledError(AgentError):
    """The invocation was aborted (its signal was set or its task cancelled).

    Attributes:
        dispatched: ``False`` when the Message was certainly never sent. ``None`` means the host
            had been called and delivery is unknown; ``True`` means it was delivered and only
            the wait for completion was abandoned. Nothing is rolled back either way.
        shutdown: the server was shutting down: the call was refused before it ran
            (``dispatched=False``) or aborted when the drain deadline passed (see
            :func:`foldkit_agent.drain`). Only the text says so; the JSON form is the same.
    """

    _fields = ("dispatched",)

    def __init__(self, *, capability: str, dispatched: bool | None, shutdown: bool = False) -> None:
        self.dispatched = dispatched
        self.shutdown = shutdown
        texts = _SHUTDOWN if shutdown else _CANCELLED
        super().__init__(texts[dispatched].format(capability=capability), capability=capability)


# By delivery: False, never sent; None, unknown; True, applied and only the wait abandoned.
_CANCELLED: dict[bool | None, str] = {
    False: "The call to {capability!r} was cancelled before anything was sent.",
    None: (
        "The call to {capability!r} was cancelled while the application was receiving it; "
        "whether it was applied is unknown and nothing was rolled back. Read the current "
        "state before retrying."
    ),
    True: (
        "The call to {capability!r} was cancelled while waiting for it to complete. The "
        "request was applied and nothing was rolled back; read the current state before "
        "retrying."
    ),
}
_SHUTDOWN: dict[bool | None, str] = {
    False: (
        "The server is shutting down, so the call to {capability!r} was not run; nothing "
        "was sent. Call it again once the server is back."
    ),
    None: (
        "The server shut down while the application was receiving the call to "
        "{capability!r}; whether it was applied is unknown and nothing was rolled back. "
        "Read the current state before retrying."
    ),
    True: (
        "The server shut down while the call to {capability!r} was waiting to complete: it "
        "was applied, whether it completed is unknown, and nothing was rolled back. Read the "
        "current state before retrying."
    ),
}


class AgentCompletionTimeoutError(AgentError):
    """The completion contract's deadline passed. The outcome is unknown, not failed.

    Attributes:
        timeout: the deadline that passed, in seconds.
        dispatched: ``True`` when the host accepted the Message, ``None`` when the host had not
            returned yet (delivery unknown).
    """

    _fields = ("timeout", "dispatched")

    def __init__(self, *, capability: str, timeout: float, dispatched: bool | None = True) -> None:
        self.timeout = timeout
        self.dispatched = dispatched
        super().__init__(
            f"{capability!r} did not report completion within {timeout:g} s. The outcome is "
            "unknown: the request may still complete, and nothing was rolled back. Read the "
            "current state before retrying.",
            capability=capability,
        )


class AgentResourceError(AgentError):
    """A resource read failed: the name is unknown, or its projection could not be read."""

    def __init__(self, *, resource: str, known: bool = False) -> None:
        if known:
            text = f"The resource {resource!r} could not be read right now."
        else:
            text = f"There is no resource named {resource!r}."
        super().__init__(text, capability=resource)


class AgentHostError(AgentError):
    """The application failed while handling the call (host dispatch or completion check).

    Attributes:
        dispatched: ``False`` when an application hook (``to_message``) failed before anything
            was sent, ``None`` when delivery is unknown, ``True`` when the Message was
            delivered and a later step (a completion check) failed.
    """

    _fields = ("dispatched",)

    def __init__(self, *, capability: str, dispatched: bool | None = None) -> None:
        self.dispatched = dispatched
        text = _HOST_FAILED[bool(dispatched) if dispatched is not None else None]
        super().__init__(text.format(capability=capability), capability=capability)


_HOST_FAILED: dict[bool | None, str] = {
    False: (
        "The application could not build the request for {capability!r} from this input; "
        "nothing was sent. Check the input against the current state."
    ),
    True: (
        "{capability!r} was applied, but its completion could not be checked. The outcome "
        "is unknown; read the current state before retrying."
    ),
    None: (
        "The application failed while receiving the call to {capability!r}. Whether it was "
        "applied is unknown and nothing was rolled back; read the current state before "
        "retrying."
    ),
}


class AgentIdempotencyError(AgentError):
    """A call's idempotency key could not give the first call's outcome, so nothing ran.

    Stripe's semantics: a key names one logical call of one capability by one caller; a
    retry with the key answers what the first call answered, without running again.

    Attributes:
        reason: ``"invalid"`` (not a string of 1 to 255 characters), ``"conflict"`` (the
            key was first used with other input: change the key or the input),
            ``"in_progress"`` (the first call with the key is still running: ask again
            later) or ``"unknown"`` (the first call was interrupted after the application
            received it, by a crash or a timeout, so its outcome is unknown: read the
            current state before using a new key). Nothing was sent by this call.
    """

    _fields = ("reason",)

    def __init__(self, *, capability: str, reason: str) -> None:
        self.reason = reason
        text = _IDEMPOTENCY.get(reason, _IDEMPOTENCY["unknown"])
        super().__init__(text.format(capability=capability), capability=capability)


_IDEMPOTENCY: dict[str, str] = {
    "invalid": (
        "The idempotency key of this call to {capability!r} must be a string of 1 to 255 "
        "characters; nothing was sent. Send a new key (a UUID, say) or none."
    ),
    "conflict": (
        "This idempotency key was first used with other input for {capability!r}; nothing "
        "was sent. Use a new key for a new call, or retry with the first call's input."
    ),
    "in_progress": (
        "The first call to {capability!r} with this idempotency key is still in progress; "
        "nothing more was sent. Retry with the same key later to get its outcome."
    ),
    "unknown": (
        "The first call to {capability!r} with this idempotency key was interrupted after "
        "the application received it, so its outcome is unknown and it was not run again. "
        "Read the current state before calling again with a new key."
    ),
}


class InputRejected(Exception):
    """Raise from ``to_message`` when well-formed input names something the Model lacks.

    The runtime turns it into :class:`AgentInvalidInputError` for that one call (nothing is
    sent), with ``{"path": path, "problem": problem}`` as its issue, so the agent learns which
    field to change. Write ``problem`` for the agent and keep the Model out of it.

    Example:
        >>> def select(inp, ctx):
        ...     if not any(t.id == inp.id for t in ctx.model.todos):
        ...         raise InputRejected("no todo has this id; read the context for the ids",
        ...                             path="id")
        ...     return SelectedTodo(id=inp.id)
    """

    def __init__(self, problem: str, *, path: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.path = path


EXTRAS: Final[Mapping[str, tuple[str, str]]] = {
    "foldkit_agent.adapters.mcp": ("mcp", "the MCP adapter"),
    "foldkit_agent.adapters.a2a": ("a2a", "the A2A adapter"),
    "foldkit_agent.adapters.a2a.database": ("a2a-db", "an A2A task store in SQL"),
    "foldkit_agent.adapters.web": ("web", "the web surface and WebMCP"),
    "foldkit_agent.adapters.native": ("web", "the Agent Native adapter"),
    "foldkit_agent.adapters.pydantic_ai": ("pydantic-ai", "the pydantic-ai toolset"),
    "foldkit_agent.adapters.pydantic_ai.ag_ui": ("ag-ui", "the AG-UI app"),
    "foldkit_agent.adapters.openai_agents": ("openai-agents", "the OpenAI Agents SDK tools"),
    "foldkit_agent.adapters.langchain": ("langchain", "the LangChain tools"),
    "foldkit_agent.edge": ("web", "the HTTP edge (HttpOptions, CallsInFlight, Tenants)"),
    "foldkit_agent.edge.oauth": ("oauth", "OAuth tokens (OAuthVerifier, serve --auth-issuer)"),
    "foldkit_agent.contract.rates": ("limits", "rate limits (rate=, serve --rate-limit)"),
    "foldkit_agent.cli": ("cli", "the foldkit-agent command"),
    "foldkit_agent.cli.demo": ("mcp,a2a,web", "foldkit-agent demo"),
    "foldkit_agent.audit.postgres": ("postgres", "PostgresAuditSink"),
}
"""Which extra of ``pyproject.toml`` installs what each part of ours imports, and what that
part is called in the one-line answer: the one home of that mapping (the core install,
``pip install foldkit-agent``, brings only pydantic, jsonpatch and opentelemetry-api)."""


class MissingExtra(ModuleNotFoundError):
    """A part of foldkit-agent was imported without the extra that installs its libraries.

    Its text is one line naming the extra to install, such as ``the 'mcp' extra is needed
    for the MCP adapter: pip install 'foldkit-agent[mcp]' (no module named 'anyio')``;
    ``name`` is the missing module, ``extra`` the extra.
    """

    def __init__(self, part: str, missing: str) -> None:
        extra, what = EXTRAS[part]
        extras = extra.split(",")
        needed = f"the {extra!r} extra is" if len(extras) == 1 else f"the extras {extra} are"
        super().__init__(
            f"{needed} needed for {what}: pip install 'foldkit-agent[{extra}]' "
            f"(no module named {missing!r})",
            name=missing,
        )
        self.extra = extra


@contextmanager
def needs_extra(part: str) -> Generator[None]:
    """Turn a missing library imported inside the block into :class:`MissingExtra` of
    ``part`` (a key of :data:`EXTRAS`, the importing module's ``__name__``).

    The outermost part wins, since its extra is the one the caller asked for (the MCP
    adapter importing the edge asks for ``mcp``, which brings what the edge needs). A missing
    module of our own is a bug, not an extra, and passes unchanged.

    Example:
        >>> with needs_extra("foldkit_agent.adapters.mcp"):
        ...     import anyio
    """
    try:
        yield
    except ModuleNotFoundError as err:
        missing = err.name or ""
        if missing.split(".")[0] == "foldkit_agent":
            raise
        raise MissingExtra(part, missing) from None
