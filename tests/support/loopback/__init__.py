"""Loopback servers that speak the OpenAI and Anthropic wire protocols, with injectable faults.

Tests and benchmarks point the real SDKs at these instead of the internet:

    with OpenAIServer(lambda req: "hi", latency=0.1) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="fake-openai-key", max_retries=0)
        server.fail_next(1, 429, retry_after=2)

Both servers also run batches (OpenAI Files + Batch API, Anthropic Message Batches):

    with OpenAIServer(batch_seconds=0.2) as server:  # created -> completed in 0.2 s
        server.batch_outcome_when(lambda custom_id, body: custom_id == "q3", 429)
        server.next_batch_ends("expired")  # or hold_batches() / release_batches()
        ...  # then server.batch_creates, server.batches, server.uploads
"""

from .anthropic_server import AnthropicServer
from .core import (
    Answer,
    Fault,
    LoopbackServer,
    Reply,
    Request,
    count_words,
    last_user_text,
    read_log,
    set_field,
)
from .openai_server import OpenAIServer
from .process import ServerProcess

__all__ = [
    "AnthropicServer",
    "Answer",
    "Fault",
    "LoopbackServer",
    "OpenAIServer",
    "Reply",
    "Request",
    "ServerProcess",
    "count_words",
    "last_user_text",
    "read_log",
    "set_field",
]
