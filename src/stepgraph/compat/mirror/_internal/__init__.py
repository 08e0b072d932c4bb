"""``langgraph._internal``: the private helpers ecosystem packages import."""
