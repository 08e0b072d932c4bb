"""A round-robin HTTP proxy over several API processes (each request to the next one).

``python rrproxy.py PORT URL [URL...]``: streams request and response bodies, so SSE and
long ``wait`` responses pass through. For tests and the conformance check of a cluster.
"""

from __future__ import annotations

import itertools
import sys

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "host", "content-length"}


def make_app(backends: list[str]) -> Starlette:
    turn = itertools.cycle(backends)
    client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=10))

    async def forward(request: Request) -> StreamingResponse:
        url = next(turn) + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        upstream = await client.send(
            client.build_request(request.method, url, headers=headers, content=await request.body()), stream=True)
        out = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}

        async def body():  # noqa: ANN202
            try:
                async for chunk in upstream.aiter_raw():
                    yield chunk
            finally:
                await upstream.aclose()

        return StreamingResponse(body(), status_code=upstream.status_code, headers=out)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)])


if __name__ == "__main__":
    uvicorn.run(make_app(sys.argv[2:]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
