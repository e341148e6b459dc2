"""The console's web server: static pages, the LangGraph API behind a token, code excerpts.

Every request needs the token: the ``jarvis_ui`` cookie (set when the page is opened with
``?token=``, HttpOnly, SameSite=Strict) or an ``X-Jarvis-Token`` header. A request that
changes state (anything but GET and HEAD) must also come from the console's own origin.
``/api/...`` is passed to the LangGraph API server as it is (streams included), so the
pages speak the same API as the LangGraph SDK and Studio; the console adds the API
server's own token, which the pages never see.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from jarvis_graph.api_auth import TOKEN_HEADER, guard_config
from jarvis_graph.checkpointing import CheckpointError
from jarvis_graph.config import ConfigError
from jarvis_graph.memory.router import GLOBAL, workspace_namespace
from jarvis_graph.owned_paths import OwnedPathError, owned_dir, write_owned
from jarvis_graph.ui.markdown import render_markdown
from jarvis_graph.ui.sessions import CHECKPOINTER_PATH, list_sessions, session_values

STATIC = Path(__file__).with_name("static")
COOKIE = "jarvis_ui"
HEADER = "x-jarvis-token"
SAFE_METHODS = ("GET", "HEAD")
PASSED_HEADERS = ("content-type", "accept", "last-event-id")
"""Request headers passed to the API server (never the cookie or the token)."""
MAX_EXCERPT_LINES = 200
MAX_UPLOAD_BYTES = 25_000_000
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")

REFUSED_PAGE = """<!doctype html><meta charset="utf-8"><title>Jarvis console</title>
<body style="font-family: sans-serif; margin: 3em">
<h1>Jarvis console</h1><p>This address needs the token <code>jarvis ui</code> printed:
open the whole address it printed (it ends in <code>?token=…</code>).</p></body>"""


@dataclass(frozen=True)
class ConsoleConfig:
    """What the console serves: the API server it fronts, its token and the workspace."""

    api_url: str
    token: str
    workspace: Path
    api_token: str = ""
    """The API server's token (sent as ``x-api-key``); empty for a server that needs none."""


def create_app(config: ConsoleConfig) -> Starlette:
    """The console's ASGI app."""
    client = httpx.AsyncClient(base_url=config.api_url.rstrip("/"), timeout=None)

    async def index(request: Request) -> Response:
        given = request.query_params.get("token")
        if given is not None:
            if not _same(given, config.token):
                return HTMLResponse(REFUSED_PAGE, status_code=401)
            response = RedirectResponse("/", status_code=303)  # the token leaves the address bar
            response.set_cookie(COOKIE, config.token, httponly=True, samesite="strict", path="/")
            return response
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def info(request: Request) -> Response:
        # the project's tier is named by its workspace: the store cannot list every project
        project = list(workspace_namespace(config.workspace))
        spaces = [project, [GLOBAL]]
        return JSONResponse({"workspace": str(config.workspace), "api": "/api", "memory": spaces})

    async def code(request: Request) -> Response:
        return _excerpt(config.workspace, request.query_params)

    async def task(request: Request) -> Response:
        try:
            body = await request.json()
            given = [(str(f["name"]), base64.b64decode(f["data"])) for f in body.get("files", [])]
            text = str(body["task"])
        except (ValueError, KeyError, TypeError) as exc:
            detail = f"send {{task, files: [{{name, data (base64)}}]}}: {exc}"
            return JSONResponse({"detail": detail}, status_code=400)
        try:
            made = await asyncio.to_thread(attach, config.workspace, text, given)
        except (ValueError, OwnedPathError) as exc:  # ImageError, ConfigError, too large, a link
            return JSONResponse({"detail": str(exc)}, status_code=400)
        return JSONResponse(made)

    async def markdown(request: Request) -> Response:
        try:
            text = (await request.json()).get("text")
        except (ValueError, AttributeError):  # not JSON, or not an object
            text = None
        if not isinstance(text, str):
            detail = 'send {"text": "..."}: a JSON object whose text is the Markdown'
            return JSONResponse({"detail": detail}, status_code=400)
        return JSONResponse({"html": render_markdown(text)})

    async def sessions(request: Request) -> Response:
        try:
            rows = await asyncio.to_thread(list_sessions, config.workspace)
        except (CheckpointError, ConfigError) as exc:
            return JSONResponse({"detail": f"cannot read the sessions: {exc}"}, status_code=500)
        known = await known_threads([row["thread_id"] for row in rows])
        for row in rows:  # the others are read from the store, and continued by jarvis run
            row["console"] = row["thread_id"] in known
        return _json(rows)

    async def session(request: Request) -> Response:
        thread = request.path_params["thread_id"]
        try:
            found = await asyncio.to_thread(session_values, config.workspace, thread)
        except (CheckpointError, ConfigError) as exc:
            return JSONResponse({"detail": f"cannot read session {thread}: {exc}"}, status_code=500)
        if found is None:
            return JSONResponse(
                {"detail": f"the project has no session {thread!r}"}, status_code=404
            )
        return _json(found)

    async def known_threads(ids: list[str]) -> set[str]:
        """Which of ``ids`` the API server has (it takes UUIDs only)."""
        asked = [i for i in ids if _is_uuid(i)]
        if not asked:
            return set()
        body = {"ids": asked, "limit": len(asked), "select": ["thread_id"]}
        try:
            reply = await client.post("/threads/search", json=body, headers=api_headers())
            reply.raise_for_status()
        except httpx.HTTPError:
            return set()  # listed all the same, read from the store
        return {str(uuid.UUID(str(t["thread_id"]))) for t in reply.json()} & set(asked)

    def api_headers() -> dict[str, str]:
        return {TOKEN_HEADER: config.api_token} if config.api_token else {}

    async def api(request: Request) -> Response:
        path = request.path_params["path"]
        headers = {k: v for k, v in request.headers.items() if k.lower() in PASSED_HEADERS}
        headers |= api_headers()
        upstream = client.build_request(
            request.method,
            f"/{path}",
            params=request.query_params,
            headers=headers,
            content=await request.body(),
        )
        try:
            reply = await client.send(upstream, stream=True)
        except httpx.HTTPError as exc:
            detail = f"the LangGraph API server at {config.api_url} did not answer: {exc}"
            return JSONResponse({"detail": detail}, status_code=502)
        kept = {
            k: v
            for k, v in reply.headers.items()
            if k.lower() in ("content-type", "cache-control", "location", "content-location")
        }
        return StreamingResponse(
            reply.aiter_raw(),
            status_code=reply.status_code,
            headers=kept,
            background=BackgroundTask(reply.aclose),
        )

    routes = [
        Route("/", index),
        Route("/console/info", info),
        Route("/console/code", code),
        Route("/console/task", task, methods=["POST"]),
        Route("/console/markdown", markdown, methods=["POST"]),
        Route("/console/sessions", sessions),
        Route("/console/sessions/{thread_id}", session),
        Route("/api/{path:path}", api, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(TokenGuard, token=config.token)
    return app


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text
    except ValueError:
        return False


def _json(data: Any) -> Response:
    """``data`` as JSON; a message (or another model) as its fields, as the API sends it."""
    return Response(json.dumps(data, default=_plain), media_type="application/json")


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else str(value)


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


class TokenGuard:
    """Refuses every request without the token, and state changes from another origin."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer 401 (no token) or 403 (another origin)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if request.url.path == "/" and "token" in request.query_params:
            await self.app(scope, receive, send)  # the index checks the token and sets it
            return
        given = request.cookies.get(COOKIE) or request.headers.get(HEADER) or ""
        if not given or not _same(given, self.token):
            refused: Response = (
                HTMLResponse(REFUSED_PAGE, status_code=401)
                if request.url.path == "/"
                else JSONResponse({"detail": "the console's token is missing or wrong"}, 401)
            )
            await refused(scope, receive, send)
            return
        if request.method not in SAFE_METHODS and not _same_origin(request):
            detail = "a request that changes something must come from the console's own page"
            await JSONResponse({"detail": detail}, status_code=403)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _same_origin(request: Request) -> bool:
    """Whether the request's ``Origin`` is the console's own address."""
    origin = request.headers.get("origin")
    if not origin:
        return False
    parts = urlsplit(origin)
    return parts.scheme == request.url.scheme and parts.netloc == request.headers.get("host")


def _excerpt(workspace: Path, params: Any) -> Response:
    """The lines around ``line`` of ``file`` (inside the workspace, symlinks resolved)."""
    name = str(params.get("file") or "")
    root = workspace.resolve()
    try:
        line = int(params.get("line") or 1)
        around = min(int(params.get("around") or 8), MAX_EXCERPT_LINES // 2)
    except ValueError:
        return JSONResponse({"detail": "line and around are numbers"}, status_code=400)
    path = (root / name).resolve()
    if not name or not path.is_relative_to(root):
        return JSONResponse({"detail": f"{name!r} is not a file inside {root}"}, status_code=403)
    if not path.is_file():
        return JSONResponse({"detail": f"{name!r} does not exist under {root}"}, status_code=404)
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    first, last = max(1, line - around), min(len(lines), line + around)
    body = [{"number": n, "text": lines[n - 1]} for n in range(first, last + 1)]
    return JSONResponse({"file": name, "line": line, "lines": body})


def attach(workspace: Path, task: str, files: list[tuple[str, bytes]]) -> dict[str, Any]:
    """Save uploaded files in ``<workspace>/.jarvis/uploads/``; the run input for ``task``.

    Images go to the model as ``jarvis run --image`` sends them (or as the text tesseract
    reads, for a model without vision); other files are named in the task by their path.

    Raises:
        ValueError: A file is too large, an image cannot be sent, the config is broken, or
            the uploads folder (or a file in it) is a link (:class:`OwnedPathError`).
    """
    # a cloned repository may hold .jarvis/uploads -> elsewhere: never written through
    folder = Path(".jarvis", "uploads")
    owned_dir(workspace, folder)
    images: list[Path] = []
    others: list[str] = []
    for name, data in files:
        if len(data) > MAX_UPLOAD_BYTES:
            msg = (
                f"{name} is {len(data)} bytes; files up to {MAX_UPLOAD_BYTES} bytes can be attached"
            )
            raise ValueError(msg)
        safe = re.sub(r"[^\w.-]", "_", Path(name).name)[:80] or "file"
        stored = f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}"
        path = write_owned(workspace, folder / stored, data, exclusive=True)
        if path.suffix.lower() in IMAGE_SUFFIXES:
            images.append(path)
        else:
            others.append(path.relative_to(workspace).as_posix())
    if others:
        task += "\n\nAttached files (in the workspace): " + ", ".join(others)
    note = None
    graph_input: dict[str, Any] = {"task": task}
    if images:
        # deferred: the platform and image modules load only when images are attached
        from jarvis_graph.runtime.task_input import task_with_images

        made, note = task_with_images({"workspace": str(workspace)}, task, images)
        graph_input = {"task": made["task"]}
        if "messages" in made:  # the images as content parts, sent as JSON
            graph_input["messages"] = [
                {"role": "user", "content": m.content} for m in made["messages"]
            ]
    saved = [p.relative_to(workspace).as_posix() for p in images] + others
    return {"input": graph_input, "note": note, "saved": saved}


def langgraph_config(path: Path) -> Path:
    """Write the ``langgraph.json`` the console's API server loads; its path.

    Raises:
        OwnedPathError: ``path`` or its folder is a link.
    """
    config = {
        "python_version": "3.11",
        "dependencies": ["."],
        "graphs": {
            "agent": "jarvis_graph.graphs.agent:graph",
            "planner": "jarvis_graph.graphs.planner:graph",
            "multi_agent": "jarvis_graph.graphs.multi_agent:graph",
            "code_agent": "jarvis_graph.graphs.code_agent:graph",
            "security_scan": "jarvis_graph.graphs.security_scan:graph",
        },
        "store": {"path": "jarvis_graph.memory.router.memory_store"},
        # the project's session store: console sessions are jarvis sessions too
        "checkpointer": {"path": CHECKPOINTER_PATH},
    }
    # only callers with the server's token (the console), on every route
    guard_config(config)
    return write_owned(path.parent, path.name, json.dumps(config, indent=2) + "\n")
