"""Graph drawing: Mermaid text identical to LangGraph 1.2.22 for the common cases, ASCII, JSON."""

import operator
import subprocess
import sys
from typing import Annotated, Literal, TypedDict

import pytest

from stepgraph.channels import EphemeralValue, LastValue
from stepgraph.draw import CurveStyle, Graph, NodeStyles, build_graph
from stepgraph.graph import END, START, StateGraph
from stepgraph.pregel import NodeBuilder, Pregel
from stepgraph.types import Command

STYLES = (
    "\tclassDef default fill:#f2f0ff,line-height:1.2\n"
    "\tclassDef first fill-opacity:0\n"
    "\tclassDef last fill:#bfb6fc\n"
)
HEAD = "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n"


class S(TypedDict):
    x: Annotated[list, operator.add]


def f(state):
    return {}


def graph_of(*names, **node_kw):
    g = StateGraph(S)
    for name in names:
        g.add_node(name, f, **node_kw.get(name, {}))
    return g


def plain(compiled, **kw):
    return compiled.get_graph(**kw).draw_mermaid(with_styles=False)


def lines(*rows):
    return "graph TD;\n" + "".join(f"\t{r}\n" for r in rows)


def chain():
    g = graph_of("a", "b")
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g.compile()


def child():
    g = graph_of("c1", "c2")
    g.add_edge(START, "c1")
    g.add_edge("c1", "c2")
    return g.compile()


def test_chain_exact_with_styles():
    """A chain renders the stadium START/END nodes, classes, edges and classDefs."""
    assert chain().get_graph().draw_mermaid() == HEAD + (
        "\t__start__([<p>__start__</p>]):::first\n\ta(a)\n\tb(b)\n"
        "\t__end__([<p>__end__</p>]):::last\n"
        "\t__start__ --> a;\n\ta --> b;\n\tb --> __end__;\n"
    ) + STYLES


def test_explicit_end_edge_same_as_implicit():
    """add_edge(b, END) draws exactly like a node left without outgoing edges."""
    g = graph_of("a", "b")
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    assert plain(g.compile()) == plain(chain())


def test_path_map_dict_labels():
    """A path_map dict labels dotted edges with its keys, sorted by source then target."""
    g = graph_of("agent", "tools")
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lambda s: "x", {"continue": "tools", "end": END})
    g.add_edge("tools", "agent")
    assert plain(g.compile()) == lines(
        "__start__ --> agent;", "agent -. &nbsp;end&nbsp; .-> __end__;",
        "agent -. &nbsp;continue&nbsp; .-> tools;", "tools --> agent;",
    )


def test_path_map_label_equal_to_target_is_dropped_and_long_labels_wrap():
    """Keys equal to the target are unlabelled; non-str keys are str()'d; wrapping matches."""
    g = graph_of("a", "b", "c")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "x", {"b": "b", "go to c please now": "c", True: END})
    c = g.compile()
    assert plain(c) == lines(
        "__start__ --> a;", "a -. &nbsp;True&nbsp; .-> __end__;", "a -.-> b;",
        "a -. &nbsp;go to c please now&nbsp; .-> c;", "b --> __end__;", "c --> __end__;",
    )
    wrapped = c.get_graph().draw_mermaid(with_styles=False, wrap_label_n_words=2)
    assert "\ta -. &nbsp;go to&nbsp<br>&nbspc please&nbsp<br>&nbspnow&nbsp; .-> c;\n" in wrapped


def test_path_map_list():
    """A path_map list draws unlabelled dotted edges, END included."""
    g = graph_of("a", "b", "c")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b", ["b", "c", END])
    g.add_edge("b", "c")
    assert plain(g.compile()) == lines(
        "__start__ --> a;", "a -.-> __end__;", "a -.-> b;", "a -.-> c;", "b --> c;",
        "c --> __end__;",
    )


def test_literal_return_hint():
    """A router's Literal return hint gives its destinations."""

    def route(s) -> Literal["b", "__end__"]:
        return "b"

    g = graph_of("a", "b")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", route)
    g.add_edge("b", "a")
    assert plain(g.compile()) == lines(
        "__start__ --> a;", "a -.-> __end__;", "a -.-> b;", "b --> a;"
    )


def test_command_literal_hints():
    """Command[Literal[...]] return hints draw dotted edges from the node."""

    def a(s) -> Command[Literal["b", "c"]]:
        return Command(goto="b")

    def b(s) -> Command[Literal["c", "__end__"]]:
        return Command(goto="c")

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_node("c", f)
    g.add_edge(START, "a")
    assert plain(g.compile()) == lines(
        "__start__ --> a;", "a -.-> b;", "a -.-> c;", "b -.-> __end__;", "b -.-> c;",
        "c --> __end__;",
    )


def test_destinations_tuple_and_dict_labels():
    """destinations= tuple is unlabelled; a dict maps node -> label."""
    g = graph_of("a", "b", "c", a={"destinations": ("b", "c")},
                 b={"destinations": {"c": "to c", END: "finish"}})
    g.add_edge(START, "a")
    assert plain(g.compile()) == lines(
        "__start__ --> a;", "a -.-> b;", "a -.-> c;", "b -. &nbsp;finish&nbsp; .-> __end__;",
        "b -. &nbsp;to c&nbsp; .-> c;", "c --> __end__;",
    )


def test_interrupts_and_metadata_annotations():
    """interrupt_before/after, defer and scalar metadata appear under the node name."""
    g = graph_of("a", "b", "c", a={"metadata": {"k": "v", "n": 3, "l": [1, 2], "d": {"x": 1}}},
                 c={"defer": True})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    text = g.compile(interrupt_before=["a", "c"], interrupt_after=["b", "c"]).get_graph().draw_mermaid()
    assert "\ta(a<hr/><small><em>k = v\nn = 3\nl = 1, 2\n__interrupt = before</em></small>)\n" in text
    assert "\tb(b<hr/><small><em>__interrupt = after</em></small>)\n" in text
    assert "\tc(c<hr/><small><em>defer = True\n__interrupt = before,after</em></small>)\n" in text


def test_markdown_names_and_unsafe_ids():
    """Names wrapped in _ get <p>; ids escape non [A-Za-z0-9_-] characters as hex."""
    g = graph_of("my node", "_b_")
    g.add_edge(START, "my node")
    g.add_edge("my node", "_b_")
    text = g.compile().get_graph().draw_mermaid()
    assert "\tmy\\20node(my node)\n\t_b_(<p>_b_</p>)\n" in text
    assert "\tmy\\20node --> _b_;\n" in text


def test_waiting_edges_draw_one_edge_per_start():
    """add_edge([a, b], c) draws a --> c and b --> c."""
    g = graph_of("a", "x", "b", "c")
    g.add_edge(START, "a")
    g.add_edge(START, "x")
    g.add_edge("x", "b")
    g.add_edge(["a", "b"], "c")
    assert plain(g.compile()) == lines(
        "__start__ --> a;", "__start__ --> x;", "a --> c;", "b --> c;", "x --> b;",
        "c --> __end__;",
    )


def test_unannotated_router_may_go_anywhere():
    """Improvement over LangGraph: an unhinted router gets dotted edges to every node and END."""
    g = graph_of("a", "b", "c")
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b")
    g.add_edge("b", "c")
    graph = g.compile().get_graph()
    assert {(e.source, e.target, e.conditional) for e in graph.edges} == {
        ("__start__", "a", False), ("a", "__end__", True), ("a", "a", True), ("a", "b", True),
        ("a", "c", True), ("b", "c", False), ("c", "__end__", False),
    }
    assert graph.first_node().id == START and graph.last_node().id == END


def test_end_edge_next_to_branch_and_isolated_node_like_langgraph():
    """An END edge beside other edges is not drawn; a node nothing reaches stays unlinked."""
    g = graph_of("a", "b", "lonely")
    g.add_edge(START, "a")
    g.add_edge("a", END)
    g.add_conditional_edges("a", lambda s: "b", ["b"])
    graph = g.compile().get_graph()
    assert graph.draw_mermaid(with_styles=False) == lines(
        "__start__ --> a;", "a -.-> b;", "b --> __end__;"
    )
    assert graph.first_node() is None  # two nodes without incoming edges: no :::first
    assert "\t__start__(<p>__start__</p>)\n" in graph.draw_mermaid()


def sub_nested():
    inner = graph_of("inner", "c3")
    inner.nodes.clear()
    inner.add_node("inner", child())
    inner.add_node("c3", f)
    inner.add_edge(START, "inner")
    inner.add_edge("inner", "c3")
    g = graph_of("a")
    g.add_node("outer", inner.compile())
    g.add_edge(START, "a")
    g.add_edge("a", "outer")
    return g.compile()


def test_xray_nested_exact():
    """xray=True expands every level into nested subgraph blocks with prefixed ids."""
    assert sub_nested().get_graph(xray=True).draw_mermaid() == HEAD + (
        "\t__start__([<p>__start__</p>]):::first\n\ta(a)\n\t__end__([<p>__end__</p>]):::last\n"
        "\t__start__ --> a;\n\ta --> outer\\3ainner\\3ac1;\n\touter\\3ac3 --> __end__;\n"
        "\tsubgraph outer\n\touter\\3ac3(c3)\n\touter\\3ainner\\3ac2 --> outer\\3ac3;\n"
        "\tsubgraph inner\n\touter\\3ainner\\3ac1(c1)\n\touter\\3ainner\\3ac2(c2)\n"
        "\touter\\3ainner\\3ac1 --> outer\\3ainner\\3ac2;\n\tend\n\tend\n"
    ) + STYLES


def test_xray_levels_and_default():
    """xray=1 expands one level; the default draws subgraphs as plain nodes."""
    c = sub_nested()
    assert plain(c, xray=1) == (
        "graph TD;\n\t__start__ --> a;\n\ta --> outer\\3ainner;\n\touter\\3ac3 --> __end__;\n"
        "\tsubgraph outer\n\touter\\3ainner --> outer\\3ac3;\n\tend\n"
    )
    assert plain(c) == lines("__start__ --> a;", "a --> outer;", "outer --> __end__;")


def test_xray_subgraph_with_two_exits_and_function_caller():
    """A subgraph END with two inputs is kept; a function calling a subgraph expands too."""
    g2 = graph_of("p", "q")
    g2.add_edge(START, "p")
    g2.add_conditional_edges("p", lambda s: "q", {"yes": "q", "no": END})
    sub = g2.compile()

    def calls(s):
        return sub.invoke(s)

    g = graph_of("z")
    g.add_node("one", sub)
    g.add_node("two", calls)
    g.add_edge(START, "one")
    g.add_edge("one", "two")
    g.add_edge("two", "z")
    edges = [(e["source"], e["target"]) for e in g.compile().get_graph(xray=True).to_json()["edges"]]
    assert edges[:3] == [("__start__", "one:p"), ("one:__end__", "two:p"), ("two:__end__", "z")]
    assert ("two:p", "two:q") in edges


def test_to_json_and_node_queries():
    """to_json has LangGraph's shape; first/last nodes and trimming behave like langchain's."""
    c = chain()
    data = c.get_graph(xray=True).to_json()
    assert [n["id"] for n in data["nodes"]] == ["__start__", "a", "b", "__end__"]
    assert data["nodes"][1]["type"] == "runnable" and data["nodes"][1]["data"]["name"] == "a"
    assert data["nodes"][-1] == {"id": "__end__"}
    assert data["edges"][0] == {"source": "__start__", "target": "a"}
    g = c.get_graph()
    g.trim_first_node()
    g.trim_last_node()
    assert list(g.nodes) == ["a", "b"] and g.first_node().id == "a" and g.last_node().id == "b"
    labelled = Graph()
    labelled.add_node(None, "x")
    labelled.add_node(None, "y")
    labelled.add_edge("x", "y", "go", True)
    assert labelled.to_json()["edges"] == [
        {"source": "x", "target": "y", "data": "go", "conditional": True}
    ]
    with pytest.raises(ValueError, match="already exists"):
        labelled.add_node(None, "x")


def test_curve_style_frontmatter_and_colors():
    """curve_style, frontmatter_config (sorted YAML) and node_colors are honoured."""
    text = chain().get_graph().draw_mermaid(
        curve_style=CurveStyle.BASIS, node_colors=NodeStyles(last="fill:#000"),
        frontmatter_config={"title": "My graph: x",
                            "config": {"theme": "neutral", "themeVariables": {"primaryColor": "#e2e2e2"}}},
    )
    assert text.startswith(
        "---\nconfig:\n  flowchart:\n    curve: basis\n  theme: neutral\n  themeVariables:\n"
        "    primaryColor: '#e2e2e2'\ntitle: 'My graph: x'\n---\ngraph TD;\n"
    )
    assert text.endswith("\tclassDef last fill:#000\n")


def test_low_level_pregel_channel_edges():
    """A low-level Pregel draws START to input-triggered nodes and writer -> trigger edges."""
    n1 = NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b")
    n2 = NodeBuilder().subscribe_only("b").do(lambda x: x).write_to("c")
    n3 = NodeBuilder().subscribe_to("b", "c").do(lambda x: x).write_to("d")
    app = Pregel(
        nodes={"node1": n1, "node2": n2, "node3": n3},
        channels={"a": EphemeralValue(str), "b": EphemeralValue(str), "c": EphemeralValue(str),
                  "d": LastValue(str)},
        input_channels="a", output_channels=["d"],
    )
    assert app.get_graph().draw_mermaid() == HEAD + (
        "\tnode1(node1)\n\tnode2(node2)\n\tnode3(node3)\n"
        "\t__start__([<p>__start__</p>]):::first\n\t__end__([<p>__end__</p>]):::last\n"
        "\t__start__ --> node1;\n\tnode1 --> node2;\n\tnode1 --> node3;\n\tnode2 --> node3;\n"
        "\tnode3 --> __end__;\n"
    ) + STYLES


async def test_aget_graph_matches_get_graph():
    """aget_graph returns the same drawing as get_graph."""
    c = sub_nested()
    assert (await c.aget_graph(xray=True)).draw_mermaid() == c.get_graph(xray=True).draw_mermaid()
    assert build_graph(c).to_json() == c.get_graph().to_json()


def test_draw_ascii_layout():
    """ASCII: boxes by rank top to bottom, loops and labels listed, no grandalf needed."""
    g = graph_of("agent", "tools")
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lambda s: "x", {"continue": "tools", "end": END})
    g.add_edge("tools", "agent")
    text = g.compile().get_graph().draw_ascii()
    rows = text.splitlines()
    row_of = {name: next(i for i, r in enumerate(rows) if f"| {name} |" in r)
              for name in ("__start__", "agent", "tools", "__end__")}
    assert row_of["__start__"] < row_of["agent"] < row_of["tools"] == row_of["__end__"]
    assert "Loop edges (not drawn above):\n  tools --> agent" in text
    assert "  agent -. continue .-> tools" in text
    assert all(r == r.rstrip() for r in rows)
    assert Graph().draw_ascii() == ""


def test_draw_ascii_long_edges_and_self_loops():
    """Rank-skipping edges route through waypoints; self-loops are listed, not drawn."""
    g = graph_of("a", "b", "c")
    g.add_edge(START, "a")
    g.add_edge(START, "c")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_conditional_edges("c", lambda s: END, {"again": "c", "done": END})
    text = g.compile().get_graph().draw_ascii()
    assert "  c -. again .-> c" in text
    assert text.count("+---+") == 6  # a, b and c boxes (top and bottom borders)
    box = next(r for r in text.splitlines() if "| b |" in r)
    assert "*" in box  # START -> c passes beside b


def test_no_grandalf_or_langchain_import():
    """Drawing imports neither grandalf nor langchain_core."""
    code = ("import sys; from stepgraph.draw import Graph; g = Graph(); g.add_node(None, 'a');"
            "g.draw_ascii(); g.draw_mermaid(); print('grandalf' in sys.modules,"
            " 'langchain_core' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_png_is_out_of_scope():
    """draw_mermaid_png explains itself instead of failing obscurely."""
    with pytest.raises(NotImplementedError, match="mermaid"):
        chain().get_graph().draw_mermaid_png()


def test_a_graph_that_never_ends_gets_a_dotted_end_from_its_last_step():
    """A cycle with no way out is drawn as LangGraph draws it: a dotted edge to ``__end__``
    from the node its 251-step drawing run ends on (here ``b``: start, a, b, a, ...)."""
    g = graph_of("a", "b")
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "a")
    assert plain(g.compile()) == (
        "graph TD;\n\t__start__ --> a;\n\ta --> b;\n\tb --> a;\n\tb -.-> __end__;\n"
    )
    three = graph_of("a", "b", "c")
    three.add_edge(START, "a")
    three.add_edge("a", "b")
    three.add_edge("b", "c")
    three.add_edge("c", "a")
    assert plain(three.compile()).endswith("\ta -.-> __end__;\n")  # step 250 runs a
