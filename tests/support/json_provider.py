"""A third party's HTTP provider, written from the public kit alone (`evals.providers.http`), as
docs/writing-a-provider.md shows it: its "An HTTP API" code is this module's, verbatim
(tests/unit/test_http_kit.py holds them alike). `jsonapi` asks a model behind a JSON API that is
not OpenAI's, POST {base_url}/generate. Loaded with `pytest -p tests.support.json_provider` (a
package would name its module in its `roblox_evals` entry point)."""

from __future__ import annotations

from evals import urls
from evals.providers import (
    Completion,
    Provider,
    ProviderInfo,
    ProviderSpec,
    Request,
    Usage,
    api_key_from_env,
    http,
    key_variable,
    register_provider,
)


class JsonApiProvider(Provider):
    """POST {base_url}/generate: {"model", "prompt", "system", "max_tokens"} in,
    {"text", "model", "usage": {"input", "output"}} out, an error as {"error": {"message"}}."""

    def __init__(self, spec: ProviderSpec):
        super().__init__(spec)
        self.key = api_key_from_env(
            key_variable(spec) or "JSONAPI_KEY", required=True
        )  # --api-key-env, else key_env
        endpoint = urls.connection(
            spec.base_url
        )  # the URL as given: credentials in it are kept out of the spec
        assert endpoint is not None  # needs_base_url: never made without one
        self.url, self.query, self.headers = (
            f"{endpoint.base_url.rstrip('/')}/generate",
            endpoint.query,
            endpoint.headers,
        )
        self.client = http.http_client()

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.key, *urls.secrets(self.spec.base_url))

    def complete(self, request: Request, *, timeout: float) -> Completion:
        body = {
            "model": self.spec.model,
            "prompt": request.prompt,
            "system": request.system,
            "max_tokens": request.max_tokens,
        }
        response = http.send(
            self.client,
            "POST",
            self.url,
            timeout=timeout,
            json=body,
            params=self.query,
            headers={**self.headers, "authorization": f"Bearer {self.key}"},
        )
        reply = http.reply_body(response.content)
        usage = http.json_object(reply.get("usage"), "usage", optional=True)
        return Completion(
            text=http.json_text(reply.get("text"), "text"),
            usage=Usage(
                input=http.token_count(usage.get("input"), "usage.input"),
                output=http.token_count(usage.get("output"), "usage.output"),
            ),
            model=http.json_text(reply.get("model"), "model", optional=True),
        )


register_provider(
    "jsonapi",
    ProviderInfo(
        "tests.support.json_provider:JsonApiProvider",
        frozenset({"base_url", "max_tokens"}),
        needs_base_url=True,
        key_env="JSONAPI_KEY",
        position=70,
    ),
)
