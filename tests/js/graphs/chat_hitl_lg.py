"""``chat_hitl`` in LangGraph's API: the reference rendering hosted by ``langgraph dev``.

Behaviour (the stepgraph twin in ``examples/chat_hitl.py`` must match it exactly):

    START -> propose -> review -> answer -> END     over MessagesState

``propose``  appends an AI message that calls the tool ``send_email``
             (args ``{"to": "ann@example.com", "subject": "Hello", "body": "Hi Ann!"}``,
             tool-call id ``call_send_email``).
``review``   ``interrupt()``s with a tool-call review request in the shape of langchain's
             HumanInTheLoopMiddleware (what agent-chat-ui's inbox view renders)::

                 {"action_requests": [{"name": "send_email", "args": {...},
                                       "description": "Review the e-mail to ann@example.com"}],
                  "review_configs": [{"action_name": "send_email",
                                      "allowed_decisions": ["approve", "reject"]}]}

             and, on resume with ``{"decisions": [{"type": "approve" | "reject", ...}]}``,
             appends a tool message (``tool_call_id="call_send_email"``, name ``send_email``)
             whose content is the decision type (``"approve"``/``"reject"``; a missing or
             malformed value counts as ``"reject"``).
``answer``   streams, through an offline fake chat model, the AI message
             ``"decision: <type>"`` where <type> is the last tool message's content.

Input ``{"messages": [{"role": "user", "content": "mail ann"}]}`` stops in ``review``
(next == ["review"]); resuming with ``{"decisions": [{"type": "approve"}]}`` ends with
messages [human, ai(tool call), tool "approve", ai "decision: approve"].
No network: the chat model is langchain-core's ``GenericFakeChatModel``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

EMAIL_ARGS = {"to": "ann@example.com", "subject": "Hello", "body": "Hi Ann!"}
TOOL_CALL_ID = "call_send_email"


def review_request() -> dict[str, Any]:
    return {
        "action_requests": [
            {
                "name": "send_email",
                "args": dict(EMAIL_ARGS),
                "description": "Review the e-mail to ann@example.com",
            }
        ],
        "review_configs": [
            {"action_name": "send_email", "allowed_decisions": ["approve", "reject"]}
        ],
    }


def decision_type(resume: Any) -> str:
    try:
        kind = resume["decisions"][0]["type"]
    except (KeyError, IndexError, TypeError):
        return "reject"
    return kind if kind in ("approve", "reject", "edit") else "reject"


def propose(state: MessagesState) -> dict[str, Any]:
    call = {"name": "send_email", "args": dict(EMAIL_ARGS), "id": TOOL_CALL_ID, "type": "tool_call"}
    return {"messages": [AIMessage(content="", tool_calls=[call])]}


def review(state: MessagesState) -> dict[str, Any]:
    resume = interrupt(review_request())
    kind = decision_type(resume)
    return {"messages": [ToolMessage(content=kind, name="send_email", tool_call_id=TOOL_CALL_ID)]}


def answer(state: MessagesState) -> dict[str, Any]:
    last = state["messages"][-1]
    kind = last.content if isinstance(last, ToolMessage) else "reject"
    model = GenericFakeChatModel(messages=iter([AIMessage(content=f"decision: {kind}")]))
    return {"messages": [model.invoke(state["messages"])]}


chat_hitl = (
    StateGraph(MessagesState)
    .add_node("propose", propose)
    .add_node("review", review)
    .add_node("answer", answer)
    .add_edge(START, "propose")
    .add_edge("propose", "review")
    .add_edge("review", "answer")
    .add_edge("answer", END)
    .compile(name="chat_hitl")
)
