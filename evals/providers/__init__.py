"""Providers behind one interface: `make_provider(spec)` and `Provider.complete(request)`.

    _base.py      `Provider`, `ProviderSpec` (and the messages, `Request` and `Completion`,
                  re-exported from `evals.messages`), the key and the reply checks
    _registry.py  `ProviderInfo`, `register_provider`, `providers()`
    _make.py      `make_provider`, `PROVIDERS`, the keys a command needs (`check_keys`)
    _retry.py     `call_with_retries`, `RetryPolicy`, the throttles
    http.py       the kit for a provider over HTTP (the client, the deadline, the error kinds)
    openai.py, anthropic.py, live.py, local.py, reference.py: the built-in providers, each
                  registering itself as a third party's does (evals/entry_points.py)

The names here are imported on first use: registering a provider (`from evals.providers
import ProviderInfo, register_provider`) imports the registry alone, and that is what
pytest's process does before it starts the child that asks the model
(`evals.askers.processes.prestart`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evals.lazy import names_from

if TYPE_CHECKING:
    from ._base import (
        Completion,
        Provider,
        ProviderSpec,
        Request,
        Usage,
        api_key_from_env,
        is_openrouter,
        kind_of,
    )
    from ._make import (
        CANDIDATE_KEY_HINT,
        JUDGE_KEY_HINT,
        PROVIDERS,
        Missing,
        batch_providers,
        check_key,
        check_keys,
        configured_secrets,
        deferred_provider,
        effective_spec,
        key_variable,
        keys_message,
        make_provider,
        missing_keys,
        provider_class,
        unknown_provider,
    )
    from ._registry import ProviderInfo, provider_ahead, providers, register_provider
    from ._retry import (
        RetryPolicy,
        Throttle,
        call_with_retries,
        endpoint_throttle,
        limit_share,
        redact,
    )

_MODULE = {
    **dict.fromkeys(
        (
            "Completion",
            "Provider",
            "ProviderSpec",
            "Request",
            "Usage",
            "api_key_from_env",
            "is_openrouter",
            "kind_of",
        ),
        "_base",
    ),
    **dict.fromkeys(
        (
            "CANDIDATE_KEY_HINT",
            "JUDGE_KEY_HINT",
            "PROVIDERS",
            "Missing",
            "batch_providers",
            "check_key",
            "check_keys",
            "configured_secrets",
            "deferred_provider",
            "effective_spec",
            "key_variable",
            "keys_message",
            "make_provider",
            "missing_keys",
            "provider_class",
            "unknown_provider",
        ),
        "_make",
    ),
    **dict.fromkeys(
        ("ProviderInfo", "provider_ahead", "providers", "register_provider"), "_registry"
    ),
    **dict.fromkeys(
        (
            "RetryPolicy",
            "Throttle",
            "call_with_retries",
            "endpoint_throttle",
            "limit_share",
            "redact",
        ),
        "_retry",
    ),
}
__all__ = sorted(_MODULE)

__getattr__ = names_from(__name__, _MODULE, globals())
