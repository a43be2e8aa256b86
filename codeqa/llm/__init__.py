"""The chat client: how codeqa talks to a chat model, for whichever stage asks one.

    chat.py      the ChatModel protocol, OpenAIChat (any OpenAI-compatible endpoint), FakeChat; Generation
                 (what one request may produce, how long it waits), ChatDelta, LLMTimeout and LLMClosed
    endpoint.py  what the endpoint says about itself: its context window, the model it serves, a prompt's tokens

The answer stage streams answers through it and the query side's LLM reranker (query/rerank.py) asks it
for one short reply, so it sits below both, beside embed/ (the other model client): it imports only
codeqa's config, errors and types. Importing it loads neither `openai` nor `httpx`.

    from codeqa.llm import ChatModel, FakeChat, Generation, OpenAIChat
"""

from __future__ import annotations

from .chat import (ChatDelta, ChatModel, FakeChat, Generation, LLMClosed, LLMTimeout, Message, OpenAIChat,
                   missing_model_message)
from .endpoint import DEFAULT_WINDOW, EndpointInfo, count_prompt_tokens, probe_endpoint

__all__ = ["ChatModel", "ChatDelta", "Generation", "OpenAIChat", "FakeChat", "Message", "LLMClosed", "LLMTimeout",
           "missing_model_message", "EndpointInfo", "probe_endpoint", "count_prompt_tokens", "DEFAULT_WINDOW"]
