"""``/mcp``: the server's assistants as Model Context Protocol tools (streamable HTTP).

Built on the official ``mcp`` SDK (``pip install 'stepgraph[server]'``), stateless as on
LangGraph's server: every POST is answered on its own (JSON, no session to keep).
``tools/list`` lists the assistants the caller may see (auth's ``assistants.search``
filter), one tool each, named after the assistant, described by its description, taking
its graph's input JSON schema; ``tools/call`` runs the assistant as a stateless run
(``threads.create_run`` authorization as for ``POST /runs/wait``) and answers its output
as JSON text (``structuredContent`` too), or ``isError`` with the run's error.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from stepgraph.server.errors import ApiError
from stepgraph.server.serde import jsonable

if TYPE_CHECKING:
    from starlette.requests import Request

    from stepgraph.server.context import ServerContext

__all__ = ["McpEndpoint", "mcp_routes"]

logger = logging.getLogger("stepgraph.server")

_MAX_TOOLS = 1000
_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def tool_name(name: str) -> str:
    """An assistant's name as an MCP tool name (letters, digits, ``_`` and ``-``)."""
    return _TOOL_NAME.sub("_", name).strip("_")[:64] or "assistant"


class McpEndpoint:
    """The ASGI app behind ``/mcp``; ``running(ctx)`` serves it for the app's lifetime."""

    def __init__(self) -> None:
        self._manager: Any = None
        self._ctx: ServerContext | None = None

    @contextlib.asynccontextmanager
    async def running(self, ctx: ServerContext) -> AsyncIterator[None]:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self._ctx = ctx
        self._manager = StreamableHTTPSessionManager(app=self._server(), stateless=True, json_response=True)
        async with self._manager.run():
            yield
        self._manager = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.responses import JSONResponse

        if self._manager is None:  # pragma: no cover - only between shutdown and the last request
            await JSONResponse({"detail": "MCP is not running"}, 503)(scope, receive, send)
            return
        if scope["method"] != "POST":  # stateless: no session to stream to or to end
            await JSONResponse(_rpc_error(-32000, "Method Not Allowed: POST JSON-RPC messages to /mcp"), 405,
                               headers={"Allow": "POST"})(scope, receive, send)
            return
        ctype = dict(scope.get("headers") or ()).get(b"content-type", b"").split(b";")[0].strip().lower()
        if ctype != b"application/json":
            await JSONResponse(_rpc_error(-32600, "Unsupported Media Type: Content-Type must be application/json"),
                               415)(scope, receive, send)
            return

        async def answer(message: Any) -> None:
            if message["type"] == "http.response.start" and message["status"] == 202:  # no body follows
                message = {**message, "headers": [(k, v) for k, v in message.get("headers") or ()
                                                  if k.lower() != b"content-type"]}
            await send(message)

        # The SDK's transport serves the path it is given; the route is ``/mcp`` exactly.
        await self._manager.handle_request(scope, receive, answer)

    # -- the MCP server ----------------------------------------------------------------------
    def _server(self) -> Any:
        import mcp.types as types
        from mcp.server.lowlevel import Server

        from stepgraph.server.routes.meta import server_version

        server: Any = Server("stepgraph", version=server_version(),
                             instructions="Each tool runs one assistant of this server and returns its output.")

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            return [types.Tool(name=name, description=desc, inputSchema=schema)
                    for name, (_, desc, schema) in (await self._visible(server)).items()]

        @server.call_tool(validate_input=True)
        async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
            tools = await self._visible(server)
            if name not in tools:
                raise ValueError(f"Unknown tool {name!r}: tools/list names the assistants you may run")
            return await self._call(server, tools[name][0], arguments)

        return server

    async def _visible(self, server: Any) -> dict[str, tuple[str, str, dict[str, Any]]]:
        """``_tools``, an auth refusal as an MCP error naming its status (``403 ...``)."""
        from mcp.shared.exceptions import McpError
        from mcp.types import INVALID_REQUEST, ErrorData

        try:
            return await self._tools(server)
        except ApiError as exc:
            raise McpError(ErrorData(code=INVALID_REQUEST, message=f"{exc.status} {exc.detail}")) from None

    def _request(self, server: Any) -> Request:
        return server.request_context.request

    async def _tools(self, server: Any) -> dict[str, tuple[str, str, dict[str, Any]]]:
        """``{tool name: (assistant id, description, input schema)}``, newest assistant first."""
        from stepgraph.server.auth import authorize
        from stepgraph.server.schemas.assistants import AssistantSearch

        ctx = self._ctx
        assert ctx is not None
        request = self._request(server)
        access = await authorize(request, "assistants", "search", {"metadata": {}, "limit": _MAX_TOOLS, "offset": 0})
        items, *_ = await ctx.assistants.search(AssistantSearch(limit=_MAX_TOOLS), access)
        tools: dict[str, tuple[str, str, dict[str, Any]]] = {}
        for assistant in items:
            name = tool_name(str(assistant.get("name") or assistant["graph_id"]))
            if name in tools:
                continue
            schema = await self._input_schema(ctx, assistant)
            desc = assistant.get("description") or f"Runs the {assistant['graph_id']!r} graph and returns its output."
            tools[name] = (assistant["assistant_id"], desc, schema)
        return tools

    async def _input_schema(self, ctx: ServerContext, assistant: dict[str, Any]) -> dict[str, Any]:
        try:
            graph = await ctx.graph(assistant["graph_id"], assistant.get("config") or None)
            schema = dict(graph.get_input_jsonschema() or {})
        except Exception:  # noqa: BLE001 - a broken factory must not hide the other tools
            logger.exception("MCP: the input schema of assistant %s failed", assistant["assistant_id"])
            schema = {}
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return schema

    async def _call(self, server: Any, assistant_id: str, arguments: dict[str, Any]) -> Any:
        import mcp.types as types

        from stepgraph.server.auth import request_auth
        from stepgraph.server.routes._common import configurable_headers

        ctx = self._ctx
        assert ctx is not None
        request = self._request(server)
        body = {"assistant_id": assistant_id, "input": arguments, "on_completion": "delete"}
        try:
            job = await ctx.service.create(None, body, auth=request_auth(request),
                                           headers=configurable_headers(request))
        except ApiError as exc:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc.detail))],
                                        isError=True)
        result = jsonable(await ctx.service.outcome(job.run))
        if isinstance(result, dict) and "__error__" in result:
            text = json.dumps(result["__error__"], default=str)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)
        text = json.dumps(result, default=str, ensure_ascii=False)
        structured = result if isinstance(result, dict) else None
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structuredContent=structured)




def _rpc_error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


class _Passthrough:
    """A "response" that hands the request on to an ASGI app (the SDK answers it)."""

    def __init__(self, app: Any, request: Request) -> None:
        self.app, self.request = app, request

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, self.request.receive, send)


def mcp_routes(endpoint: McpEndpoint) -> list[Any]:
    """``POST /mcp`` (in the OpenAPI document: JSON-RPC answers, 202 for a notification, the
    transport's 406/415 as JSON-RPC errors) and ``GET``/``DELETE /mcp`` (405: stateless)."""
    from starlette.routing import Route

    from stepgraph.server.endpoint import operation
    from stepgraph.server.schemas.a2a import JsonRpcResponse, McpMessage

    rpc_errors = tuple((status, JsonRpcResponse) for status in (400, 406, 413, 415))

    @operation(body_doc=McpMessage, ok=JsonRpcResponse, empty=(202,), errors=(406, 415),
               error_models=rpc_errors, headers=(("Accept", "application/json, text/event-stream"),))
    async def mcp(request: Request) -> Any:
        """The Model Context Protocol (streamable HTTP, stateless): the assistants as tools."""
        return _Passthrough(endpoint, request)

    return [Route("/mcp", mcp, methods=["POST"]), Route("/mcp", endpoint, methods=["GET", "DELETE"])]
