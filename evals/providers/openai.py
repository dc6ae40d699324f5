"""OpenAI: Chat Completions, or the Responses API with `--responses-api`.

This module registers the provider and imports little more: pytest's process imports it
before it starts the child that asks the model (`evals.askers.processes.prestart`). The
provider itself, `OpenAIProvider` (shared with `live`), and its Batch API are in
`_openai.py`, imported at the first call; their names are re-exported here."""

from __future__ import annotations

from evals.flags import Flag
from evals.lazy import names_from
from evals.providers import ProviderInfo, register_provider

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
RESPONSES_API = Flag(
    "--responses-api",
    "openai: use the Responses API instead of Chat Completions",
    forward=True,
    resume="provider",
)

register_provider(
    "openai",
    ProviderInfo(
        "evals.providers._openai:OpenAIProvider",
        frozenset({"base_url", "effort", "max_tokens"}),
        EFFORTS,
        base_url_env="OPENAI_BASE_URL",
        key_env="OPENAI_API_KEY",
        flags=(RESPONSES_API,),
        batch_price=0.5,
        sdk=("openai",),
        position=10,
    ),
)

_MODULE = dict.fromkeys(
    (
        "OpenAIBatch",
        "OpenAIProvider",
        "chat_body_completion",
        "chat_messages",
        "openai_error",
        "responses_completion",
        "BATCH_METADATA_KEY",
    ),
    "_openai",
)
__getattr__ = names_from(__package__, _MODULE, globals())
