"""The request layer without a network: JSON decoding within limits (property tests), the
body-size middleware, limit settings, and the OpenAPI document derived from the models."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stepgraph.server.bodylimit import BodyLimitMiddleware
from stepgraph.server.errors import ApiError
from stepgraph.server.jsonbody import _STRING, decode_json, json_depth

# -- decode_json ------------------------------------------------------------------------------
TRICKY_TEXT = st.lists(st.sampled_from(list('ab[]{}",:\\/ \n\t\x00é日\U0001f600') + ["\\u0000", "\\\\"]),
                       max_size=8).map("".join)
SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1)
           | st.floats(allow_nan=False, allow_infinity=False) | TRICKY_TEXT)
JSON = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(TRICKY_TEXT, kids, max_size=4),
                    max_leaves=30)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _nest(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = [value]
    return value


@settings(max_examples=300, deadline=None)
@given(JSON, st.booleans(), st.integers(min_value=0, max_value=6))
def test_decode_round_trips_and_measures_depth(value: Any, ascii_only: bool, extra: int) -> None:
    value = _nest(value, extra)
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    skeleton = _STRING.sub(b'""', raw)
    assert json_depth(skeleton, 200) == _depth(value)
    assert decode_json(raw, max_depth=200) == value


@settings(max_examples=200, deadline=None)
@given(JSON, st.integers(min_value=2, max_value=12))
def test_depth_limit_is_exact(value: Any, limit: int) -> None:
    raw = json.dumps(value).encode()
    if _depth(value) <= limit:
        assert decode_json(raw, max_depth=limit) == value
    else:
        with pytest.raises(ApiError) as info:
            decode_json(raw, max_depth=limit)
        assert info.value.status == 422 and info.value.detail.startswith("[SG541]")


@pytest.mark.parametrize("levels", [100, 255, 1024, 100_000])
def test_very_deep_bodies_cost_no_recursion(levels: int) -> None:
    for raw in ((b"[" * levels) + (b"]" * levels), b'{"a":' * levels + b"1" + b"}" * levels):
        with pytest.raises(ApiError) as info:
            decode_json(raw)
        assert info.value.detail.startswith("[SG541]")
    with pytest.raises(ApiError) as info:  # never closed: not JSON (too deep, or cut short)
        decode_json(b"[" * levels)
    assert info.value.detail.startswith(("[SG541]", "[SG540]"))


@pytest.mark.parametrize(("raw", "code"), [
    (b"[18446744073709551616]", "SG542"),
    (b"[-9223372036854775809]", "SG542"),
    (b'{"a": [1, 2, 99999999999999999999999999999999]}', "SG542"),
    (b"[1e400]", "SG540"),
    (b"[NaN]", "SG540"),
    (b"[-Infinity]", "SG540"),
    (b'["\xc3\x28"]', "SG540"),
    (b'["\\udc00"]', "SG540"),
    (b"{", "SG540"),
])
def test_refused_bodies(raw: bytes, code: str) -> None:
    with pytest.raises(ApiError) as info:
        decode_json(raw)
    assert info.value.status == 422 and info.value.detail.startswith(f"[{code}]"), info.value.detail
    assert "\nHint: " in info.value.detail


def test_numbers_inside_strings_are_not_numbers() -> None:
    raw = b'{"99999999999999999999999": "123456789012345678901234567890", "x": 1.5e300}'
    assert decode_json(raw) == {"99999999999999999999999": "123456789012345678901234567890", "x": 1.5e300}
    assert decode_json(b"[18446744073709551615, -9223372036854775808, 1e-400]") == [2**64 - 1, -(2**63), 0.0]


def test_stdlib_fallback_applies_the_same_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    from stepgraph.server import jsonbody

    monkeypatch.setattr(jsonbody, "orjson", None)
    assert decode_json(b'{"a": [1, "x", 2.5]}') == {"a": [1, "x", 2.5]}
    for raw, code in ((b"[NaN]", "SG540"), (b"[1e999]", "SG540"), (b'["\\ud800"]', "SG540"),
                      (b'["\xff"]', "SG540"), (b"[" * 70 + b"]" * 70, "SG541")):
        with pytest.raises(ApiError) as info:
            decode_json(raw)
        assert info.value.detail.startswith(f"[{code}]"), (raw[:20], info.value.detail)
    value = decode_json(b'["\\ud83d\\ude00"]')
    assert value == ["\U0001f600"] and not math.isnan(decode_json(b"[1.0]")[0])


# -- the body-size middleware -----------------------------------------------------------------
def _app(limit: int) -> tuple[Any, list[int]]:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from stepgraph.server.errors import install_handlers

    seen: list[int] = []

    async def echo(request: Request) -> JSONResponse:
        total = 0
        async for chunk in request.stream():
            total += len(chunk)
            seen.append(total)
        return JSONResponse({"bytes": total})

    inner = Starlette(routes=[Route("/", echo, methods=["POST"])], exception_handlers=install_handlers())
    return BodyLimitMiddleware(inner, max_bytes=limit), seen


async def _call(app: Any, chunks: list[bytes], headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes, int]:
    pending = list(chunks)
    read = 0

    async def receive() -> dict[str, Any]:
        nonlocal read
        if not pending:
            return {"type": "http.disconnect"}
        body = pending.pop(0)
        read += len(body)
        return {"type": "http.request", "body": body, "more_body": bool(pending)}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/", "raw_path": b"/", "query_string": b"",
             "headers": headers, "http_version": "1.1", "scheme": "http", "server": ("t", 80), "client": ("c", 1),
             "root_path": ""}
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body, read


async def test_chunked_body_is_cut_at_the_limit() -> None:
    app, seen = _app(1000)
    status, body, read = await _call(app, [b"x" * 300] * 10, [])
    assert status == 413 and json.loads(body)["detail"].startswith("[SG544]")
    assert max(seen) <= 1000  # the handler never got a byte past the limit
    assert read == 3000  # the rest was read and dropped, so the client gets the answer
    status, body, _ = await _call(app, [b"x" * 300] * 3, [])
    assert status == 200 and json.loads(body) == {"bytes": 900}


async def test_declared_length_is_refused_before_the_app_runs() -> None:
    app, seen = _app(1000)
    status, body, read = await _call(app, [b"x" * 500] * 3, [(b"content-length", b"1500")])
    assert status == 413 and seen == [] and b"1500 bytes" in body
    status, _, read = await _call(app, [b"x"], [(b"content-length", str(10**12).encode())])
    assert status == 413 and read == 0  # too big to drain: answered without reading


# -- limits and the OpenAPI document ----------------------------------------------------------
def test_limits_from_settings_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from stepgraph.server import ServerSettings, create_app
    from stepgraph.server.graphs import GraphRegistry
    from stepgraph.server.settings import ConfigError

    def app(**kw: Any) -> Any:
        return create_app(ServerSettings(graphs={}, **kw), registry=GraphRegistry({}, None))

    assert app().state.request_limits.max_body_bytes == 10 * 1024 * 1024
    assert app().state.request_limits.max_json_depth == 64
    monkeypatch.setenv("HTTP_MAX_REQUEST_BODY_BYTES", "2048")
    monkeypatch.setenv("STEPGRAPH_MAX_JSON_DEPTH", "20")
    assert (app().state.request_limits.max_body_bytes, app().state.request_limits.max_json_depth) == (2048, 20)
    assert app(max_body_bytes=99).state.request_limits.max_body_bytes == 99
    for name, value in (("HTTP_MAX_REQUEST_BODY_BYTES", "lots"), ("HTTP_MAX_REQUEST_BODY_BYTES", "0"),
                        ("STEPGRAPH_MAX_JSON_DEPTH", "1000")):
        monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError, match=name):
            app()
        monkeypatch.delenv(name)


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return spec["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else schema


def test_openapi_document_is_typed(http) -> None:
    spec = http.get("/openapi.json").json()
    assert spec["openapi"] == "3.1.0"
    schemas = spec["components"]["schemas"]
    text = json.dumps(spec)
    for ref in {part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]}:
        assert ref in schemas, ref
    bodies = 0
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            assert op["operationId"] and op["summary"], (method, path)
            assert "422" in op["responses"] and "400" in op["responses"], (method, path)
            assert "401" not in op["responses"] and "403" not in op["responses"], (method, path)  # no auth here
            for status, response in op["responses"].items():
                if status not in ("202", "204"):
                    content = response.get("content")
                    assert content, (method, path, status)
            if "requestBody" in op:
                bodies += 1
                schema = _resolve(spec, op["requestBody"]["content"]["application/json"]["schema"])
                assert schema.get("properties") or schema.get("type") == "array", (method, path)
                assert "413" in op["responses"]
    assert bodies >= 25
    run = schemas["RunCreate"]
    assert run["required"] == ["assistant_id"]
    assert {"input", "command", "stream_mode", "config", "multitask_strategy", "after_seconds"} <= set(run["properties"])
    assert schemas["StorePut"]["properties"]["ttl"]["anyOf"][0]["maximum"] > 0
    thread_id = spec["paths"]["/threads/{thread_id}"]["get"]["parameters"][0]["schema"]
    assert thread_id["maxLength"] == 256 and "pattern" in thread_id
    run_id = spec["paths"]["/runs/{run_id}"]["get"]["parameters"][0]["schema"]
    assert run_id["format"] == "uuid"
    stream = spec["paths"]["/runs/stream"]["post"]["responses"]["200"]["content"]
    assert set(stream) == {"text/event-stream"}
    limit = next(p for p in spec["paths"]["/threads/{thread_id}/runs"]["get"]["parameters"] if p["name"] == "limit")
    assert limit["schema"]["type"] == "integer" and limit["schema"]["maximum"] == 10000
    for path in ("/runs/{run_id}/cancel", "/threads/{thread_id}/runs/{run_id}/cancel"):
        # 200 with ``wait=true``, 202 (no body) without: both documented
        assert {"200", "202"} <= set(spec["paths"][path]["post"]["responses"]), path
