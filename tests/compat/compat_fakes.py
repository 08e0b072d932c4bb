"""A scripted, offline tool-calling chat model for ``create_agent`` tests."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr


def tool_call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    """An AI reply that calls one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


class ScriptedChatModel(BaseChatModel):
    """Answers with ``replies`` in order (the last one again when they run out) and records
    the messages each call received. ``bind_tools`` returns the model itself."""

    replies: list[AIMessage]
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        return self._calls

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        with self._lock:
            index = min(len(self._calls), len(self.replies) - 1)
            self._calls.append(list(messages))
        reply = self.replies[index].model_copy()
        reply.id = reply.id or f"ai-{uuid.uuid4().hex[:12]}"  # unique: add_messages merges by id
        return ChatResult(generations=[ChatGeneration(message=reply)])
