"""``langgraph.utils``: LangGraph's old home of config and runnable helpers."""
