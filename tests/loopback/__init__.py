"""Loopback servers that speak the OpenAI and Anthropic wire protocols, with injectable faults.

Tests and benchmarks point the real SDKs at these instead of the internet:

    with OpenAIServer(lambda req: "hi", latency=0.1) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="fake-openai-key", max_retries=0)
        server.fail_next(1, 429, retry_after=2)
"""

from .anthropic_server import AnthropicServer
from .core import (Answer, Fault, LoopbackServer, Reply, Request, count_words, last_user_text,
                   read_log, set_field)
from .openai_server import OpenAIServer
from .process import ServerProcess

__all__ = ["AnthropicServer", "Answer", "Fault", "LoopbackServer", "OpenAIServer", "Reply",
           "Request", "ServerProcess", "count_words", "last_user_text", "read_log", "set_field"]
