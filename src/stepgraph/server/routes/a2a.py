"""A2A (agent-to-agent protocol 0.3, JSON-RPC 2.0) for assistants whose graph has a
``messages`` state, as LangGraph's server offers.

``GET /.well-known/agent-card.json?assistant_id=`` describes an assistant; ``POST
/a2a/{assistant_id}`` takes ``message/send`` (run, wait, answer the Task), ``message/stream``
(the same as SSE: the Task, ``working``, each AI message as the run makes it, the
artifact, the final status), ``tasks/get``
(a run as a Task) and ``tasks/cancel`` (refused, as on LangGraph). A message's
``contextId`` is the thread (created when new; a new one when omitted), a Task's ``id`` is
the run's. Text parts become one user message; data parts are merged into the input.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from stepgraph.server.auth import request_auth
from stepgraph.server.endpoint import operation
from stepgraph.server.errors import ApiError, json_response
from stepgraph.server.routes._common import configurable_headers, ctx_of, run_for, url_path
from stepgraph.server.schemas.a2a import AgentCard, AgentCardQuery, JsonRpcRequest, JsonRpcResponse
from stepgraph.server.serde import jsonable
from stepgraph.server.util import is_uuid, now_iso, uuid7
from stepgraph.server.validation import read_json

__all__ = ["ROUTES"]

PROTOCOL_VERSION = "0.3.0"
_STATES = {"pending": "submitted", "running": "working", "success": "completed", "error": "failed",
           "timeout": "failed", "interrupted": "input-required"}


class RpcError(Exception):
    """A JSON-RPC error (``code`` as the protocol numbers them)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


async def _messages_assistant(request: Request, assistant_id: str) -> dict[str, Any]:
    """The assistant (auth's ``assistants.read`` applies), refused unless its graph has ``messages``."""
    from stepgraph.server.auth import authorize

    ctx = ctx_of(request)
    access = await authorize(request, "assistants", "read", {"assistant_id": assistant_id})
    assistant = await ctx.assistants.resolve(assistant_id, status=404, access=access)
    graph = await ctx.graph(assistant["graph_id"], assistant.get("config") or None)
    props = (graph.get_input_jsonschema() or {}).get("properties") or {}
    if "messages" not in props:
        raise ApiError(400, f"Assistant {assistant_id} does not support A2A: its graph "
                            f"{assistant['graph_id']!r} has no 'messages' in its input state.")
    return assistant


@operation(query=AgentCardQuery, ok=AgentCard, errors=(400, 404))
async def agent_card(request: Request, query: AgentCardQuery) -> Response:
    """The A2A agent card of an assistant (its graph must have a ``messages`` state)."""
    from stepgraph.server.routes.meta import server_version

    assistant = await _messages_assistant(request, query.assistant_id)
    base = str(request.base_url).rstrip("/")
    name = str(assistant.get("name") or assistant["graph_id"])
    description = assistant.get("description") or f"The {assistant['graph_id']!r} graph, served by stepgraph."
    return json_response({
        "protocolVersion": PROTOCOL_VERSION, "name": name, "description": description,
        "url": base + url_path("a2a", assistant["assistant_id"]), "preferredTransport": "JSONRPC",
        "version": server_version(),
        "capabilities": {"streaming": True, "pushNotifications": False, "stateTransitionHistory": False},
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{"id": f"{assistant['graph_id']}-main", "name": name, "description": description,
                    "tags": [assistant["graph_id"]]}],
    })


# -- messages and tasks -----------------------------------------------------------------------
def _input(message: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(graph input, the message as history)`` from an A2A message."""
    if not isinstance(message, dict) or not isinstance(message.get("parts"), list) or not message["parts"]:
        raise RpcError(-32602, "params.message must be an object with a non-empty list of parts")
    texts: list[str] = []
    data: dict[str, Any] = {}
    for part in message["parts"]:
        kind = part.get("kind") or part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "data" and isinstance(part.get("data"), dict):
            data.update(part["data"])
        else:
            raise RpcError(-32602, "only text and data parts are supported (file parts are not)")
    payload: dict[str, Any] = {k: v for k, v in data.items() if k != "messages"}
    messages = list(data.get("messages") or []) if isinstance(data.get("messages"), list) else []
    if texts:
        messages.append({"role": "user", "content": "\n".join(texts)})
    if messages:
        payload["messages"] = messages
    return payload, message


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else str(b.get("text") or "") for b in content
                       if isinstance(b, (str, dict)))
    return "" if content is None else json.dumps(content, default=str)


def _artifact(values: Any) -> dict[str, Any] | None:
    """The last AI message of the final values as an artifact (else the values as data)."""
    messages = values.get("messages") if isinstance(values, dict) else None
    if isinstance(messages, list) and messages:
        last = messages[-1]
        if isinstance(last, dict) and last.get("type") in ("ai", "AIMessageChunk", "assistant"):
            parts: list[dict[str, Any]] = [{"kind": "text", "text": _text(last)}]
            return {"artifactId": uuid7(), "name": "Assistant Response", "parts": parts}
    if values is None:
        return None
    return {"artifactId": uuid7(), "name": "Assistant Response", "parts": [{"kind": "data", "data": {"values": values}}]}


def _task(run: dict[str, Any], state: str, values: Any = None, error: Any = None,
          history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"state": state, "timestamp": now_iso()}
    if error is not None:
        status["message"] = {"kind": "message", "role": "agent", "messageId": uuid7(),
                             "parts": [{"kind": "text", "text": json.dumps(error, default=str)}]}
    task: dict[str, Any] = {"kind": "task", "id": run["run_id"], "contextId": run["thread_id"], "status": status}
    artifact = _artifact(values) if state in ("completed", "input-required") else None
    if artifact is not None:
        task["artifacts"] = [artifact]
    if history is not None:
        task["history"] = history
    return task


async def _start(request: Request, assistant_id: str, params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    message = params.get("message")
    graph_input, history = _input(message)
    context_id = message.get("contextId")
    if context_id is not None and not is_uuid(context_id):
        raise RpcError(-32602, "message.contextId must be a UUID (it is the thread id)")
    assistant = await _messages_assistant(request, assistant_id)
    ctx = ctx_of(request)
    body = {"assistant_id": assistant["assistant_id"], "input": graph_input, "if_not_exists": "create"}
    job = await ctx.service.create(context_id or uuid7(), body, auth=request_auth(request),
                                   headers=configurable_headers(request))
    history = {**history, "contextId": job.thread_id, "taskId": job.run_id}
    return job, history


async def _finished(request: Request, job: Any, history: dict[str, Any]) -> dict[str, Any]:
    ctx = ctx_of(request)
    result = jsonable(await ctx.service.outcome(job.run))
    run = await ctx.runs.find(job.run_id) or job.run
    if isinstance(result, dict) and "__error__" in result:
        return _task(run, "failed", error=result["__error__"], history=[history])
    state = _STATES.get(run.get("status") or "success", "completed")
    if isinstance(result, dict) and result.get("__interrupt__"):
        state = "input-required"
    return _task(run, state, values=result, history=[history])


async def _task_get(request: Request, params: dict[str, Any]) -> dict[str, Any]:
    task_id = params.get("id")
    if not is_uuid(task_id):
        raise RpcError(-32602, "params.id must be the task's id")
    try:
        run = await run_for(request, "read", None, task_id)
    except ApiError as exc:
        if exc.status == 404:
            raise RpcError(-32001, "Task not found") from None
        raise
    thread = await ctx_of(request).threads.find(run["thread_id"]) or {}
    state = _STATES.get(run.get("status") or "", "unknown")
    return _task(run, state, values=thread.get("values"), error=run.get("error") if state == "failed" else None)


def _reply(rid: Any, result: Any = None, error: RpcError | None = None) -> dict[str, Any]:
    if error is not None:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": error.code, "message": error.message}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _rpc_error(exc: ApiError) -> RpcError:
    code = {404: -32001, 409: -32603, 403: -32603, 401: -32603}.get(exc.status, -32602 if exc.status < 500 else -32603)
    return RpcError(code, f"{exc.status} {exc.detail}" if exc.status in (401, 403) else str(exc.detail))


def _new_ai_message(values: Any, seen: set[str]) -> dict[str, Any] | None:
    """The last message of a ``values`` event when it is an AI message not streamed yet."""
    messages = values.get("messages") if isinstance(values, dict) else None
    last = messages[-1] if isinstance(messages, list) and messages else None
    if not isinstance(last, dict) or last.get("type") not in ("ai", "AIMessageChunk"):
        return None
    key = str(last.get("id") or json.dumps(last, sort_keys=True, default=str))
    if key in seen:
        return None
    seen.add(key)
    return last


async def _stream(request: Request, rid: Any, job: Any, history: dict[str, Any]) -> AsyncIterator[str]:
    """The Task, ``working``, a ``working`` status with each new AI message as the run makes
    it, the artifact, the final status."""
    def event(result: dict[str, Any]) -> str:
        return f"data: {json.dumps(_reply(rid, result), default=str)}\n\n"

    yield event(_task(job.run, "submitted", history=[history]))
    base = {"taskId": job.run_id, "contextId": job.thread_id}
    yield event({"kind": "status-update", **base, "status": {"state": "working", "timestamp": now_iso()},
                 "final": False})
    seen: set[str] = set()
    heartbeat = ctx_of(request).settings.heartbeat
    async for item in job.log.follow(heartbeat=heartbeat):
        if item is None or item.name != "values":
            continue
        try:
            message = _new_ai_message(json.loads(item.data), seen)
        except ValueError:
            continue
        if message is not None:
            agent = {"kind": "message", "role": "agent", "messageId": str(message.get("id") or uuid7()),
                     "parts": [{"kind": "text", "text": _text(message)}], **base}
            yield event({"kind": "status-update", **base, "final": False,
                         "status": {"state": "working", "message": agent, "timestamp": now_iso()}})
    task = await _finished(request, job, history)
    for artifact in task.get("artifacts") or ():
        yield event({"kind": "artifact-update", **base, "artifact": artifact, "lastChunk": True})
    yield event({"kind": "status-update", **base, "status": task["status"], "final": True})


@operation(body_doc=JsonRpcRequest, ok=JsonRpcResponse, errors=(404,))
async def rpc(request: Request) -> Response:
    """One A2A JSON-RPC call (``message/stream`` answers Server-Sent Events)."""
    assistant_id = request.path_params["assistant_id"]
    try:
        body = await read_json(request)
    except ApiError:
        return json_response(_reply(None, error=RpcError(-32700, "Parse error")))
    rid = body.get("id") if isinstance(body, dict) else None
    if isinstance(rid, (dict, list, bool)) or (isinstance(rid, str) and len(rid) > 256):
        rid = None
    try:
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0" or not isinstance(body.get("method"), str):
            raise RpcError(-32600, "Invalid Request: a JSON-RPC 2.0 object with a method is expected")
        method, params = body["method"], body.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise RpcError(-32602, "params must be an object")
        if method == "message/send":
            job, history = await _start(request, assistant_id, params)
            return json_response(_reply(rid, await _finished(request, job, history)))
        if method == "message/stream":
            job, history = await _start(request, assistant_id, params)
            return StreamingResponse(_stream(request, rid, job, history), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-store"})
        if method == "tasks/get":
            return json_response(_reply(rid, await _task_get(request, params)))
        if method == "tasks/cancel":
            raise RpcError(-32002, "Task cannot be canceled: tasks/cancel is not supported")
        raise RpcError(-32601, f"Method not found: {method[:100]}")
    except RpcError as exc:
        return json_response(_reply(rid, error=exc))
    except ApiError as exc:
        return json_response(_reply(rid, error=_rpc_error(exc)))


ROUTES = [
    Route("/.well-known/agent-card.json", agent_card, methods=["GET"]),
    Route("/a2a/{assistant_id}", rpc, methods=["POST"]),
]
