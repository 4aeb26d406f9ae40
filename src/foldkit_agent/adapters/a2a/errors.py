"""Error answers and log records in our own words.

The SDK phrases errors with parser and library text; :class:`OwnErrorText` rewrites every
error answer of the A2A routes into text written here, and :class:`_ClientErrorLogFilter`
keeps a client's mistakes out of the logs' tracebacks.
"""

from __future__ import annotations

import json
import logging
from collections.abc import (
    Mapping,
)
from dataclasses import dataclass
from typing import Any, cast

from a2a.server.context import ServerCallContext
from a2a.types import (
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import (
    A2A_ERROR_REASONS,
    JSON_RPC_ERROR_CODE_MAP,
    A2AError,
)
from a2a.utils.proto_utils import parse_params
from google.protobuf.json_format import ParseDict
from google.protobuf.message import Message as ProtoMessage
from starlette.datastructures import Headers, QueryParams
from starlette.types import ASGIApp, Scope

from ...edge.guard import BODY_KEY, route_path
from ...edge.wire import is_json_content_type
from ._sdk import CLIENT_ERROR_RECORDS, DUPLICATE_RECORDS, params_model
from .answers import AnswerRewriter, Hold

__all__ = []

# ---------------------------------------------------------------------------------------------
# error answers and log records in our own words
# ---------------------------------------------------------------------------------------------

_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_A2A_DOMAIN = "a2a-protocol.org"
_METHODS = (
    "SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask or "
    "GetExtendedAgentCard"
)
_REASON_OF_CODE: dict[int, str] = {
    code: A2A_ERROR_REASONS.get(kind, "INTERNAL_ERROR")
    for kind, code in JSON_RPC_ERROR_CODE_MAP.items()
}
_REASON_OF_CODE[-32700] = "PARSE_ERROR"
_REASON_OF_STATUS = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}
_FIXED_TEXTS: dict[str, str] = {
    "PARSE_ERROR": "The body is not valid JSON.",
    "INVALID_REQUEST": (
        'Send one JSON-RPC 2.0 request object: {"jsonrpc": "2.0", "id": 1, "method": "...", '
        '"params": {...}}.'
    ),
    "TASK_NOT_FOUND": "There is no task with that id on this server.",
    "TASK_NOT_CANCELABLE": "The task has already ended, so it can no longer be cancelled.",
    "PUSH_NOTIFICATION_NOT_SUPPORTED": "This agent does not support push notifications.",
    "UNSUPPORTED_OPERATION": "This agent does not support that operation.",
    "CONTENT_TYPE_NOT_SUPPORTED": "This agent accepts and produces application/json only.",
    "INVALID_AGENT_RESPONSE": "The agent produced an answer the server could not deliver.",
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": "This agent has no extended agent card.",
    "EXTENSION_SUPPORT_REQUIRED": "The call needs an extension the request did not declare.",
    "NOT_FOUND": (
        "There is no A2A route at this path; the agent card's supportedInterfaces name the "
        "JSON-RPC and HTTP+JSON endpoints."
    ),
    "METHOD_NOT_ALLOWED": "This route does not answer that HTTP method.",
}
_GENERIC_ERROR = "The server could not answer this request."
OWN_TEXTS_KEY = "foldkit_agent.a2a.own_error_texts"
_MAX_ECHO = 64  # characters of a client's method or field name quoted back


def ours(context: ServerCallContext, error: A2AError) -> A2AError:
    """Mark ``error``'s message as written by this adapter, so the answer keeps it."""
    own = context.state.get(OWN_TEXTS_KEY)
    if isinstance(own, set):
        cast(set[str], own).add(error.message)
    return error


def _echo(text: str) -> str:
    return repr(text if len(text) <= _MAX_ECHO else text[:_MAX_ECHO] + "...")


def _bad_field(model: type[ProtoMessage], params: Mapping[str, Any]) -> str | None:
    """The first top-level field of ``params`` that does not parse as part of ``model``."""
    for key, value in params.items():
        try:
            ParseDict({key: value}, model(), ignore_unknown_fields=True)
        except Exception:
            return key
    return None


def _bad_query(model: type[ProtoMessage], query: QueryParams) -> str | None:
    for key in query:
        try:
            parse_params(QueryParams([(key, v) for v in query.getlist(key)]), model())
        except Exception:
            return key
    return None


@dataclass(slots=True)
class _Exchange:
    """What the error rewriter needs to know about the request it answers."""

    scope: Scope
    own: set[str]

    @property
    def path(self) -> str:
        return route_path(self.scope)

    def document(self) -> Any:
        """The request body as the edge guard parsed it (``None`` without one)."""
        return self.scope.get(BODY_KEY)

    def rpc_method(self) -> str:
        doc = self.document()
        method: Any = cast(dict[str, Any], doc).get("method") if isinstance(doc, dict) else None
        return method if isinstance(method, str) else ""

    def version_text(self) -> str:
        version = (Headers(scope=self.scope).get("a2a-version") or "").strip()
        if not version:
            return (
                "The request must carry the header A2A-Version: 1.0 (this server speaks A2A "
                "1.0 only)."
            )
        return (
            f"This server speaks A2A 1.0 only and the request asked for version "
            f"{_echo(version)}: send the header A2A-Version: 1.0."
        )

    def rpc_params_text(self) -> str:
        method = self.rpc_method()
        model = params_model(method)
        doc = self.document()
        params: Any = cast(dict[str, Any], doc).get("params", {}) if isinstance(doc, dict) else {}
        head = f"The params of {method or 'the call'} do not match the A2A 1.0 schema: "
        if not isinstance(params, dict):
            return head + "params must be a JSON object."
        field = None if model is None else _bad_field(model, cast(dict[str, Any], params))
        if field is None:
            return head + "check them against the specification."
        return head + f"the field {_echo(field)} does not hold a valid value."

    def rest_params_text(self) -> str:
        path, method = self.path, self.scope.get("method")
        head = "The request does not match the A2A 1.0 schema of this route: "
        field: str | None = None
        if method == "GET":
            model: type[ProtoMessage] = GetTaskRequest
            if path.endswith("/tasks"):
                model = ListTasksRequest
            elif path.endswith("/pushNotificationConfigs"):
                model = ListTaskPushNotificationConfigsRequest
            field = _bad_query(model, QueryParams(self.scope.get("query_string", b"")))
            if field is not None:
                return head + f"the query parameter {_echo(field)} does not hold a valid value."
            return head + "check its query parameters against the specification."
        doc = self.document()
        if not isinstance(doc, dict):
            return head + "the body must be a JSON object."
        model = (
            TaskPushNotificationConfig
            if path.endswith("/pushNotificationConfigs")
            else SendMessageRequest
        )
        field = _bad_field(model, cast(dict[str, Any], doc))
        if field is None:
            return head + "check the body against the specification."
        return head + f"the field {_echo(field)} does not hold a valid value."

    def text(self, reason: str, jsonrpc: bool) -> str:
        if reason == "VERSION_NOT_SUPPORTED":
            return self.version_text()
        if reason == "METHOD_NOT_FOUND":
            return (
                f"There is no A2A 1.0 method named {_echo(self.rpc_method())} here; use {_METHODS}."
            )
        if jsonrpc and reason == "INVALID_PARAMS":
            return self.rpc_params_text()
        if not jsonrpc and reason in ("INVALID_PARAMS", "INVALID_REQUEST"):
            return self.rest_params_text()
        return _FIXED_TEXTS.get(reason, _GENERIC_ERROR)


def _error_info(reason: str) -> dict[str, Any]:
    return {"@type": _ERROR_INFO, "reason": reason, "domain": _A2A_DOMAIN, "metadata": {}}


def _first_reason(details: Any) -> str | None:
    if isinstance(details, list) and details:
        first: Any = cast(list[Any], details)[0]
        if isinstance(first, dict):
            reason: Any = cast(dict[str, Any], first).get("reason")
            return reason if isinstance(reason, str) else None
    return None


def _rewrite_rpc_error(error: dict[str, Any], ex: _Exchange) -> dict[str, Any]:
    code: Any = error.get("code")
    code = code if isinstance(code, int) and code in _REASON_OF_CODE else -32603
    reason = _REASON_OF_CODE[code]
    out: dict[str, Any] = {"code": code, "message": ex.text(reason, jsonrpc=True)}
    if "data" in error:
        out["data"] = [_error_info(_first_reason(error["data"]) or reason)]
    return out


def _rewrite_rest_error(error: dict[str, Any], status: int, ex: _Exchange) -> dict[str, Any]:
    reason = _first_reason(error.get("details")) or _REASON_OF_STATUS.get(status, "INTERNAL")
    out: dict[str, Any] = {
        "code": status,
        "status": error.get("status") if isinstance(error.get("status"), str) else "UNKNOWN",
        "message": ex.text(reason, jsonrpc=False),
    }
    if "details" in error:
        out["details"] = [_error_info(reason)]
    return out


def _own_error(error: Any, ex: _Exchange) -> bool:
    message: Any = cast(dict[str, Any], error).get("message") if isinstance(error, dict) else None
    return isinstance(message, str) and message in ex.own


class OwnErrorText(AnswerRewriter):
    """ASGI middleware: every error answer of the A2A routes carries text written here.

    The SDK phrases errors with parser and library text (``"Failed to parse message field:
    'int' object is not iterable."``). This rewrites the ``message`` (and drops the ``data``
    / ``details`` metadata) of every JSON-RPC error object, HTTP+JSON error body and
    server-sent ``error`` event, keeping the code, status and A2A reason, unless the message
    is one this adapter raised for this request (:func:`ours`). Router 404/405 plain-text
    answers become JSON errors. The public card route is not touched.
    """

    def __init__(self, app: ASGIApp, *, jsonrpc_path: str) -> None:
        super().__init__(app)
        self.jsonrpc_path = jsonrpc_path

    def begin(self, scope: Scope) -> _Exchange:
        own: set[str] = set()
        scope[OWN_TEXTS_KEY] = own
        return _Exchange(scope, own)

    def hold(self, state: _Exchange, status: int, content_type: str) -> Hold:
        if is_json_content_type(content_type) and (self._jsonrpc(state) or status >= 400):
            return "json"
        if status >= 400 and not is_json_content_type(content_type):
            return "plain"
        return "pass"

    def body(self, state: _Exchange, body: bytes, status: int, hold: Hold) -> bytes:
        return self._body(body, status, state, self._jsonrpc(state), plain=hold == "plain")

    def chunk(self, state: _Exchange, chunk: bytes) -> bytes:
        return self._sse(chunk, state, self._jsonrpc(state))

    def _jsonrpc(self, ex: _Exchange) -> bool:
        return ex.path == self.jsonrpc_path

    def _body(self, body: bytes, status: int, ex: _Exchange, jsonrpc: bool, plain: bool) -> bytes:
        if plain:
            reason = _REASON_OF_STATUS.get(status, "INTERNAL")
            grpc = "NOT_FOUND" if status == 404 else "UNKNOWN"
            fresh = {"code": status, "status": grpc, "message": ex.text(reason, jsonrpc=False)}
            return json.dumps({"error": fresh}).encode()
        if jsonrpc and b'"error"' not in body:
            return body  # a result (the common case): nothing to rewrite
        try:
            doc: Any = json.loads(body)
        except ValueError:
            return body
        rewritten = self._document(doc, status, ex, jsonrpc)
        return body if rewritten is None else json.dumps(rewritten).encode()

    def _document(self, doc: Any, status: int, ex: _Exchange, jsonrpc: bool) -> Any:
        """``doc`` with its error rewritten, or ``None`` when it needs no change."""
        if not isinstance(doc, dict):
            return None
        data = cast(dict[str, Any], doc)
        error: Any = data.get("error")
        if not isinstance(error, dict) or _own_error(error, ex):
            return None
        err = cast(dict[str, Any], error)
        if jsonrpc:
            return {**data, "error": _rewrite_rpc_error(err, ex)}
        code: Any = err.get("code")
        return {
            **data,
            "error": _rewrite_rest_error(err, code if isinstance(code, int) else status, ex),
        }

    def _sse(self, chunk: bytes, ex: _Exchange, jsonrpc: bool) -> bytes:
        if b"event: error" not in chunk:
            return chunk
        text = chunk.decode("utf-8", "replace")
        sep = "\r\n" if "\r\n" in text else "\n"
        lines = text.split(sep)
        out: list[str] = []
        for line in lines:
            if line.startswith("data:"):
                try:
                    doc: Any = json.loads(line[5:])
                except ValueError:
                    doc = {"error": {"code": -32603 if jsonrpc else 500}}
                new = self._document(doc, 500, ex, jsonrpc)
                line = "data: " + json.dumps(doc if new is None else new)
            out.append(line)
        return sep.join(out).encode()


class _ClientErrorLogFilter(logging.Filter):
    """Keeps a client's mistakes to one DEBUG line without a traceback in the SDK's logs.

    a2a-sdk logs a bad request as a traceback (``logger.exception``) plus a WARNING line, so
    any anonymous caller could flood a server's logs. This filter, on the SDK's own loggers
    only, drops the traceback records of client errors and demotes their one-line summary
    to DEBUG (emitted only when that logger is enabled for DEBUG). Internal errors (JSON-RPC
    ``-32603``, HTTP 5xx) and unexpected exceptions keep their level and traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        template = str(record.msg)
        if template.startswith(DUPLICATE_RECORDS.get(record.name, ())):
            return False
        if record.levelno != logging.WARNING or not template.startswith(
            CLIENT_ERROR_RECORDS.get(record.name, ())
        ):
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def install_log_filter() -> None:
    """Attach :class:`_ClientErrorLogFilter` to the SDK loggers, once."""
    for name in {*CLIENT_ERROR_RECORDS, *DUPLICATE_RECORDS}:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _ClientErrorLogFilter) for f in logger.filters):
            logger.addFilter(_ClientErrorLogFilter())
