"""LangGraph's module path of the remote v3 run streams (``stepgraph/remote/run_stream.py``)."""

from stepgraph.remote.run_stream import (
    _AsyncRemoteGraphRunStream,
    _ChannelProjection,
    _ProjectionRegistry,
    _RemoteGraphRunStream,
    _translate_command_input,
)

__all__ = [
    "_AsyncRemoteGraphRunStream",
    "_ChannelProjection",
    "_ProjectionRegistry",
    "_RemoteGraphRunStream",
    "_translate_command_input",
]
