"""The request and response models of the HTTP API, declared once.

Request models validate bodies and query strings (``server.validation``); together with the
response models they make the OpenAPI document (``server.openapi``). Shapes follow the
LangGraph Server API (``langgraph_sdk.schema``); constrained field types are in ``fields``.
"""
