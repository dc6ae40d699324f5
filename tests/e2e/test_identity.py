"""The identity is what is sent: for every provider and every identity flag, the loopback
server receives a different request when the flag changes, and the result file records it;
or the flag is refused for that provider with one line. The cases are derived from the one
identity table (`evals.identity.FIELDS`) and the providers' own capabilities; that every field
has one is tests/unit/test_identity.py.

No child process: pytest runs in-process through `pytester`, against loopback OpenAI and
Anthropic servers on threads of the test (the OpenAI one is also the proxy to OpenRouter)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.identity import FIELDS
from evals.providers import (
    PROVIDERS,
    ProviderSpec,
    Request,
    effective_spec,
    make_provider,
)
from evals.providers.checkpoint import folder_hash
from tests.support.loopback import AnthropicServer, OpenAIServer

pytest_plugins = ["pytester"]

from tests.support import ROOT
from tests.support.identities import IMPLICIT, SENT, SHAPING

EVALS = str(ROOT / "tests_evals")
KEY = "fake-identity-test-key"
OPENROUTER = "http://openrouter.ai/api/v1"  # reached through the loopback server as its HTTP proxy


def sent_cases():
    for provider, info in PROVIDERS.items():
        for field in FIELDS:
            if not field.on_spec or field.name in IMPLICIT:
                continue
            if field.name in info.takes:
                yield pytest.param(provider, field.name, id=f"{provider}-{field.name}")


def refused_cases():
    for provider, info in PROVIDERS.items():
        for field in FIELDS:
            if field.on_spec and field.name not in IMPLICIT and field.name not in info.takes:
                yield pytest.param(provider, field.name, id=f"{provider}-{field.name}")


@pytest.fixture(scope="module")
def sdks_warmed():
    """One real call through each SDK before any in-process run: pytester drops the modules
    a run imports first, and an SDK whose lazily imported parts were dropped raises foreign
    exception classes in later tests of this process."""
    with (
        pytest.MonkeyPatch.context() as env,
        OpenAIServer() as openai_server,
        AnthropicServer() as anthropic_server,
    ):
        env.setenv("OPENAI_API_KEY", KEY)
        env.setenv("ANTHROPIC_API_KEY", KEY)
        make_provider(ProviderSpec("openai", "m", base_url=f"{openai_server.url}/v1")).complete(
            Request(prompt="hi"), timeout=10
        )
        make_provider(ProviderSpec("anthropic", "m", base_url=anthropic_server.url)).complete(
            Request(prompt="hi"), timeout=10
        )


@pytest.fixture(scope="module")
def local_model(tiny, tmp_path_factory):
    """The tiny checkpoint and adapter for --provider local (made only when its cases run)."""
    folder = tmp_path_factory.mktemp("local")
    checkpoint, adapter = tiny["checkpoint"], tiny["adapter"]
    # Generate once before any in-process run: pytester drops the modules a run imports
    # first, and torch's cannot be imported twice.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ROBLOX_EVALS_CACHE", str(folder / "cache"))
        spec = effective_spec(
            ProviderSpec("local", str(checkpoint), adapter=str(adapter), max_tokens=2)
        )
        make_provider(spec).complete_all([Request(prompt="hi")])
    return {"checkpoint": checkpoint, "adapter": adapter}


def flag_value(request, name: str):
    return (
        str(request.getfixturevalue("local_model")["adapter"]) if name == "adapter" else SENT[name]
    )


@pytest.fixture
def local_first(request):
    """The tiny model for a --provider local case, made before pytester (the next fixture)
    snapshots sys.modules: torch, which cannot be imported twice in a process, is then never
    dropped by it."""
    if (
        getattr(request.node, "callspec", None)
        and request.node.callspec.params.get("provider") == "local"
    ):
        return request.getfixturevalue("local_model")
    return None


@pytest.fixture
def harness(sdks_warmed, local_first, pytester, tmp_path, monkeypatch, request):
    """pytest in-process on the multiple-choice items, against one loopback server; for
    --provider local, what the provider generates with (rendered prompts, settings, weights)
    stands for the request sent."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.setenv(name, KEY)
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    servers = {"openai": OpenAIServer(), "anthropic": AnthropicServer()}
    for server in servers.values():
        server.start()
    monkeypatch.setenv("HTTP_PROXY", servers["openai"].url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("ROBLOX_EVALS_CACHE", str(tmp_path / "cache"))
    generated: list[dict] = []
    if local_first:
        from evals.providers import _local, checkpoint
        from evals.providers.local import LocalProvider

        for module in (checkpoint, _local):  # the tiny model's replies kept short
            monkeypatch.setattr(module, "DEFAULT_MAX_NEW_TOKENS", 16)

        def generate(self, requests):
            generated.append(
                {
                    "prompts": [self.render(r) for r in requests],
                    "settings": [r.max_tokens for r in requests],
                    "dtype": str(self.model.dtype),
                    "model": repr(self.model),
                }
            )
            return plain_generate(self, requests)

        plain_generate = LocalProvider._generate
        monkeypatch.setattr(LocalProvider, "_generate", generate)

    def run(provider: str, *flags: str, folder: str = "a", endpoint: bool = True):
        server = servers["anthropic" if provider == "anthropic" else "openai"]
        base_url = {
            "openai": f"{server.url}/v1",
            "anthropic": server.url,
            "live": OPENROUTER,
            "reference": None,
            "local": None,
        }[provider]
        args = [f"--provider={provider}", "-m", "multiple_choice", "--limit=1", *flags]
        if provider == "local" and not any(
            flag.startswith(("--effort", "--route")) for flag in flags
        ):
            args.append(f"--model={local_first['checkpoint']}")
        elif provider != "reference":
            args.append("--model=m-1")
        if base_url and endpoint:
            args.append(f"--base-url={base_url}")
        before = len(server.requests)
        out = tmp_path / folder
        result = pytester.runpytest_inprocess(
            EVALS, *args, f"--run-dir={out / 'runs'}", f"--results-dir={out / 'results'}"
        )
        files = sorted((out / "results" / "multiple_choice").glob("*.json"))
        config = json.loads(files[-1].read_text())["config"] if files else None
        if provider == "local":
            sent, generated[:] = list(generated), []
            return result, sent, config
        return result, [r.body for r in server.requests[before:]], config

    yield run
    for server in servers.values():
        server.stop()


@pytest.mark.parametrize("provider, name", list(sent_cases()))
def test_a_flag_the_provider_takes_changes_what_it_sends_and_is_recorded(
    harness, request, provider, name
):
    field = next(f for f in FIELDS if f.name == name)
    value = flag_value(request, name)
    flag = field.flag if field.kind is bool else f"{field.flag}={value}"

    _, plain, plain_config = harness(provider, folder="plain")
    result, flagged, config = harness(provider, flag, folder="flagged")

    assert result.ret in (0, 1), "\n".join(result.outlines[-20:] + result.errlines)
    assert len(plain) == len(flagged) == 1
    assert plain != flagged, f"{flag} did not change the request"
    # A folder is recorded as its content's hash (local), never as its path.
    recorded = folder_hash(Path(value)) if name == "adapter" else value
    assert config[field.key] == recorded and plain_config.get(field.key) not in (recorded, value)


@pytest.mark.parametrize("provider, name", list(refused_cases()))
def test_a_flag_the_provider_does_not_send_is_refused_in_one_line(harness, provider, name):
    field = next(f for f in FIELDS if f.name == name)
    flag = (
        field.flag if field.kind is bool else f"{field.flag}={SENT[name]}"
    )  # refused before a folder is read

    result, sent, config = harness(provider, flag)

    assert result.ret == pytest.ExitCode.USAGE_ERROR and not sent and config is None
    errors = [line for line in result.errlines if line.strip()]
    assert len(errors) == 1 and f"{field.flag} is not sent by --provider {provider}" in errors[0]


@pytest.mark.parametrize("name", list(SHAPING))
def test_a_flag_that_shapes_the_items_changes_the_requests_and_is_recorded(harness, name):
    field = next(f for f in FIELDS if f.name == name)
    value = SHAPING[name]

    _, plain, _ = harness("openai", folder="plain")
    _, flagged, config = harness("openai", f"{field.flag}={value}", folder="flagged")

    assert plain != flagged and config[field.key] == value


@pytest.mark.parametrize(
    "provider, variable", [(p, i.base_url_env) for p, i in PROVIDERS.items() if i.base_url_env]
)
def test_the_sdk_endpoint_variable_is_recorded_as_the_base_url(
    harness, monkeypatch, provider, variable
):
    """With OPENAI_BASE_URL (or ANTHROPIC_BASE_URL) pointing at a proxy or a mock and no
    --base-url, the run is the proxy's, not the real endpoint's."""
    _, _, direct = harness(provider, folder="direct")
    endpoint = direct["baseUrl"]
    monkeypatch.setenv(variable, endpoint)

    result, sent, config = harness(provider, folder="from-env", endpoint=False)

    assert result.ret in (0, 1) and len(sent) == 1
    assert config["baseUrl"] == endpoint.rstrip("/")
