"""A user's Starlette app mounted beside the API (``http.app``)."""

from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse
from starlette.routing import Route

STARTED = {"lifespan": False}


async def hello(request):
    user = request.scope.get("user")
    return JSONResponse({"hello": "world", "user": getattr(user, "identity", None),
                         "lifespan": STARTED["lifespan"]})


async def info(request):
    return JSONResponse({"custom": True})


class Stamp(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        response = await call_next(request)
        response.headers["x-custom-middleware"] = "yes"
        return response


@asynccontextmanager
async def lifespan(app):
    STARTED["lifespan"] = True
    yield
    STARTED["lifespan"] = False


app = Starlette(routes=[Route("/hello", hello), Route("/info", info), Route("/only-post", hello, methods=["POST"])],
                middleware=[Middleware(Stamp)], lifespan=lifespan)
