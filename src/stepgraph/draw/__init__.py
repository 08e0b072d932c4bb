"""Graph drawing: ``compiled.get_graph()`` returns a ``Graph`` you can render.

``Graph.draw_mermaid()`` prints Mermaid text laid out like LangGraph's, ``draw_ascii()`` a
plain-text box drawing, ``to_json()`` the node/edge JSON the LangGraph server returns.
"""

from stepgraph.draw.build import build_graph
from stepgraph.draw.graph import CurveStyle, Edge, Graph, Node, NodeStyles

__all__ = ["CurveStyle", "Edge", "Graph", "Node", "NodeStyles", "build_graph"]
