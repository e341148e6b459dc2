"""Who may call the LangGraph API server Jarvis starts, and what a caller may choose.

``jarvis ui`` and ``jarvis serve`` load :data:`auth` as the server's custom auth
(``auth.path`` of the ``langgraph.json`` they run). It is the one door of the API:

- **Who**: every request carries the server's token in ``x-api-key`` (what
  ``langgraph_sdk``'s ``api_key=`` sends), compared in constant time with
  ``JARVIS_API_TOKEN`` of the server's process. ``jarvis ui`` draws a new token at each start
  and gives it only to its server and its console; ``jarvis serve`` takes the user's. A server
  started without a token (``jarvis serve`` on loopback, or with ``--allow-unauthenticated``)
  still refuses a request a web page makes: browsers name the page in ``Origin``.
- **What**: a run's ``context`` may only hold :data:`REMOTE_CONTEXT_FIELDS`; the
  confirmation policy, the model's platform, address and key variable, scripts, agent files
  and prompts come from the user's settings and are refused with a 403 naming the field.
  The same holds for an assistant's ``context`` and ``configurable`` (LangGraph merges an
  assistant's context into each of its runs). When the server belongs to one workspace
  (``JARVIS_UI_WORKSPACE``), a run's ``workspace`` must be that one.

LangGraph answers some routes outside its auth: the in-memory runtime's
``/internal/truncate`` (wipes every thread), ``/internal/debug/...`` and ``/deploy`` (runs
``langgraph deploy`` with the server's environment), and ``/info``, ``/docs``,
``/openapi.json``, ``/metrics``. It does wrap them in the middleware of a custom app
(``http.app`` of ``langgraph.json``), so :data:`http_app` carries :class:`TokenGate`, which
asks every request but the health check ``/ok`` for the same token, with the same check
(:func:`caller`) as :data:`auth`.
"""

from __future__ import annotations

import hmac
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.authentication import BaseUser
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_ENV = "JARVIS_API_TOKEN"
"""The server's token; a request must carry it in :data:`TOKEN_HEADER`."""
OPEN_ENV = "JARVIS_API_UNAUTHENTICATED"
"""``1``: the server was started without a token on purpose (requests need none)."""
PINNED_WORKSPACE_ENV = "JARVIS_UI_WORKSPACE"
"""Set by ``jarvis ui``: the only workspace its server runs tasks in."""
TOKEN_HEADER = "x-api-key"
AUTH_PATH = "jarvis_graph.api_auth:auth"
"""Where ``langgraph-api`` finds :data:`auth` (``auth.path`` in ``langgraph.json``)."""
APP_PATH = "jarvis_graph.api_auth:http_app"
"""Where ``langgraph-api`` finds :data:`http_app` (``http.app`` in ``langgraph.json``)."""
OPEN_PATHS = frozenset({"/ok"})
"""Paths anyone may ask: the health check the launcher and process managers wait on."""
LOOPBACK_ROOT = "/noauth"
"""``root_path`` of LangGraph's calls to itself (in-process, never from the network)."""

REMOTE_CONTEXT_FIELDS = frozenset(
    {
        "workspace",
        "model_group",
        "tool_group",
        "toolset",
        "only_tools",
        "max_iterations",
        "plan_max_depth",
        "non_interactive",
    }
)
"""Context fields an API caller may set. They pick among what the user configured (a model
group, a tool group) or narrow the run (fewer tools, fewer steps, no questions); none can
lower the confirmation policy or choose a model endpoint, a key variable or a script."""


class ContextRefused(ValueError):
    """A run's context names a field an API caller may not set; the message says which."""


def check_remote_context(context: Mapping[str, Any] | None, where: str = "context") -> None:
    """Refuse a context from the API that sets more than :data:`REMOTE_CONTEXT_FIELDS`.

    Args:
        context: The run's (or an assistant's) context as the caller sent it.
        where: How the caller named it, for the message.

    Raises:
        ContextRefused: A field outside the allowed ones, or (on a server pinned to one
            workspace) another workspace.
    """
    if not context:
        return
    refused = sorted(str(key) for key in context if key not in REMOTE_CONTEXT_FIELDS)
    if refused:
        allowed = ", ".join(sorted(REMOTE_CONTEXT_FIELDS))
        msg = (
            f"{where} sets {', '.join(refused)}, which a run started through the API may not "
            f"choose (they come from the user's Jarvis settings); allowed: {allowed}"
        )
        raise ContextRefused(msg)
    pinned = os.environ.get(PINNED_WORKSPACE_ENV, "")
    given = context.get("workspace")
    if pinned and given is not None and not _same_folder(str(given), pinned):
        msg = f"{where} names workspace {given!r}; this server runs tasks in {pinned} only"
        raise ContextRefused(msg)


def _same_folder(given: str, pinned: str) -> bool:
    try:
        return Path(given).resolve() == Path(pinned).resolve()
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a loop of links: not it
        return False


class ApiUser(dict[str, Any], BaseUser):
    """The caller of the API, as the server keeps it: a plain mapping of its fields.

    The server puts the caller in every run's ``config.configurable``
    (``langgraph_auth_user``), as is. Any user the auth returns that is not already a
    ``BaseUser`` (a dict, a ``MinimalUserDict``) it wraps in a proxy object, which
    ``jarvis serve``'s PostgreSQL runtime cannot write as JSON: every run failed with HTTP 500.
    This one is a ``BaseUser`` (kept as is) and a ``dict`` (written as its fields, pickled by
    ``jarvis ui``'s server), so it is stored wherever the runtime stores the run; a worker
    that reads it back rebuilds the user from its ``identity``.
    """

    def __init__(self, identity: str) -> None:
        super().__init__(identity=identity, display_name=identity, is_authenticated=True)

    @property
    def identity(self) -> str:
        """Who the caller is (``jarvis``: holds the token; ``anonymous``: a tokenless server)."""
        return str(self["identity"])

    @property
    def display_name(self) -> str:
        """The caller's name as shown, its identity."""
        return str(self["display_name"])

    @property
    def is_authenticated(self) -> bool:
        """Always: a caller that is not let in gets a 401 or 403 instead of a user."""
        return True


auth = Auth()


def caller(headers: Mapping[bytes, bytes]) -> ApiUser:
    """The caller of a request with these headers, if it may use the server.

    Args:
        headers: The request's headers, names in lower case (as ASGI gives them).

    Returns:
        ``jarvis`` when it carries the server's token, ``anonymous`` on a server started
        without one on purpose.

    Raises:
        Auth.exceptions.HTTPException: 401 without the token (or on a server with neither a
            token nor leave to go without), 403 for a web page on a server without a token.
    """
    token = os.environ.get(TOKEN_ENV, "")
    if token:
        given = headers.get(TOKEN_HEADER.encode(), b"")
        if not hmac.compare_digest(given, token.encode()):
            raise Auth.exceptions.HTTPException(
                status_code=401, detail=f"this server needs its token in {TOKEN_HEADER}"
            )
        return ApiUser("jarvis")
    if os.environ.get(OPEN_ENV) != "1":  # fail closed: a server set up without either
        raise Auth.exceptions.HTTPException(
            status_code=401, detail=f"the server has no token ({TOKEN_ENV} is not set)"
        )
    if headers.get(b"origin"):  # a web page: it may not use a server that has no token
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail=f"this server has no token, so it refuses web pages; set {TOKEN_ENV}",
        )
    return ApiUser("anonymous")


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes]) -> ApiUser:
    """The caller, when it carries the server's token (or the server needs none)."""
    return caller(headers)


class TokenGate:
    """ASGI middleware: every request but :data:`OPEN_PATHS` passes :func:`caller` first.

    It sits outside LangGraph's routing and CORS, so it also guards the routes LangGraph
    answers without its auth, and a refusal carries no CORS grant. LangGraph's calls to
    itself (``root_path`` :data:`LOOPBACK_ROOT`, which no request from outside can set)
    pass, as LangGraph's auth lets them.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 401/403 (close a WebSocket) for a caller :func:`caller` refuses."""
        if scope["type"] == "lifespan":
            # Straight to the router: LangGraph's EnsureStoreAccessible, inside this
            # middleware, asks for the store on the start-up message, before the start-up
            # has set it up (the PostgreSQL runtime then fails, and the server runs without
            # its start-up), and would keep that store for good instead of the custom one.
            await scope["app"].router(scope, receive, send)
            return
        if scope["type"] not in ("http", "websocket") or _needs_no_token(scope):
            await self.app(scope, receive, send)
            return
        try:
            caller(dict(scope.get("headers") or []))
        except Auth.exceptions.HTTPException as exc:
            if scope["type"] == "websocket":  # closed before accepted: the client gets a 403
                await send({"type": "websocket.close", "code": 1008, "reason": exc.detail})
                return
            refusal = JSONResponse({"detail": exc.detail}, status_code=exc.status_code)
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _needs_no_token(scope: Scope) -> bool:
    root = str(scope.get("root_path") or "")
    if root == LOOPBACK_ROOT or root.startswith(LOOPBACK_ROOT + "/"):
        return True
    return scope["path"] in OPEN_PATHS


class _DocstringNoise(logging.Filter):
    """Drops LangGraph's warnings about its own routes' docstrings.

    With a custom app, LangGraph builds the OpenAPI description from every route's
    docstring and warns, with a traceback, about each one that is not YAML: a screenful
    at every start of ``jarvis serve`` that says nothing about the user's set-up.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "Unable to parse docstring" not in str(record.msg)


logging.getLogger("langgraph_api.utils").addFilter(_DocstringNoise())

http_app = Starlette(middleware=[Middleware(TokenGate)])
"""The custom app of ``langgraph.json`` (``http.app``): no routes, only :class:`TokenGate`,
which LangGraph puts around all of its own routes."""


def guard_config(config: dict[str, Any]) -> dict[str, Any]:
    """``config``, a ``langgraph.json``, with Jarvis' auth set in it unless it names its own.

    The auth is :data:`auth`, with Studio's sign-in off (``langgraph dev`` would otherwise
    accept it from anyone); no web page of another origin may read the answers
    (``http.cors``: the default grants every origin). With Jarvis' auth, the custom app
    (``http.app``) is :data:`http_app`, which asks for the same token on the routes
    LangGraph answers outside its auth; an app of the file's own keeps them as it decides.
    What the file sets itself is kept.
    """
    guard = config.setdefault("auth", {"path": AUTH_PATH, "disable_studio_auth": True})
    http = config.setdefault("http", {})
    if isinstance(http, dict):
        http.setdefault("cors", {"allow_origins": []})
        if isinstance(guard, dict) and guard.get("path") == AUTH_PATH:
            http.setdefault("app", APP_PATH)
    return config


def _refuse(exc: ContextRefused) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=403, detail=str(exc))


@auth.on.threads.create_run
async def check_run(ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate) -> None:
    """A run's context (or ``configurable``, which becomes it) holds allowed fields only."""
    kwargs = value.get("kwargs") or {}
    try:
        check_remote_context(kwargs.get("context"))
    except ContextRefused as exc:
        raise _refuse(exc) from None


def _check_assistant(value: Mapping[str, Any]) -> None:
    config = value.get("config") or {}
    try:
        check_remote_context(value.get("context"), "the assistant's context")
        check_remote_context(config.get("configurable"), "the assistant's configurable")
    except ContextRefused as exc:
        raise _refuse(exc) from None


@auth.on.assistants.create
async def check_new_assistant(
    ctx: Auth.types.AuthContext, value: Auth.types.AssistantsCreate
) -> None:
    """An assistant's context and configurable, merged into its runs, as a run's context."""
    _check_assistant(value)


@auth.on.assistants.update
async def check_assistant_update(
    ctx: Auth.types.AuthContext, value: Auth.types.AssistantsUpdate
) -> None:
    """An assistant's new context and configurable, as a new assistant's."""
    _check_assistant(value)


@auth.on.crons
async def refuse_crons(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Scheduled runs: Jarvis starts none through the API (their context goes unchecked)."""
    raise Auth.exceptions.HTTPException(
        status_code=403, detail="Jarvis' API server runs no scheduled runs (crons)"
    )
