"""Model metadata lookups (evals.metadata) against loopback servers that speak the real wire
shapes: OpenRouter's `GET /api/v1/models`, and the Hugging Face Hub as huggingface_hub asks it
(tests/support/loopback/hub_server.py: the model info with files metadata, a relative 307 for a
renamed repo, X-Error-Code on errors), with a CDN that must never be asked. No child process: the
lookups run in the test's process, the servers on its threads. Parsing alone is
tests/unit/test_metadata.py."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from evals.errors import EvalError
from evals.metadata import (
    MetadataError,
    lookup,
    lookup_openrouter,
    release_date,
    weights_size,
)
from tests.support.hub_repos import CKPT_BIN, File, MODELS, Q8_PARTS, REPOS, SHARDS
from tests.support.loopback import LoopbackServer, Reply
from tests.support.loopback.hub_server import (
    COMMIT,
    HubServer,
    closed_port_url,
    one_line,
    use_hub,
)

TOKEN = "fake-hub-token-never-printed"


# --- OpenRouter: the model list --------------------------------------------------------------


# --- the Hub: repos, files, answers ----------------------------------------------------------


GATED = {"gated-org/Locked-70B"}
PRIVATE = {"private-org/Own-7B"}
RENAMED = {"old-org/Tiny-Chat-8B": "tiny-org/Tiny-Chat-8B"}


@dataclass
class Servers:
    openrouter: LoopbackServer
    hub: HubServer
    openrouter_reply: list[Reply | None]  # a fault to send instead of the model list


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    hub = HubServer(token=TOKEN)
    for repo, files in REPOS.items():
        hub.add("model", repo, files, gated=repo in GATED, private=repo in PRIVATE)
    hub.renamed.update({("model", old): new for old, new in RENAMED.items()})
    fault: list[Reply | None] = [None]
    openrouter = LoopbackServer(
        lambda seen: (
            fault[0]
            or (
                Reply(200, {"data": MODELS})
                if seen.path == "/api/v1/models"
                else Reply(404, {"error": {"message": "Not Found", "code": 404}})
            )
        )
    )
    with openrouter, hub:
        yield Servers(openrouter, hub, fault)


@pytest.fixture
def env(servers: Servers, monkeypatch: pytest.MonkeyPatch, tmp_path) -> Servers:
    monkeypatch.setenv("OPENROUTER_API_BASE", f"{servers.openrouter.url}/api/v1")
    use_hub(monkeypatch, tmp_path / "hf", servers.hub.url)
    for server in (servers.openrouter, servers.hub, servers.hub.cdn):
        server.clear()
    servers.openrouter_reply[0] = None
    return servers


def info_requests(env: Servers) -> list[tuple[str, str]]:
    """(path, blobs parameter) of each request to the Hub."""
    return [(r.path, r.params.get("blobs", "")) for r in env.hub.requests]


# --- OpenRouter lookups ----------------------------------------------------------------------

TINY_CHAT_SIZE = sum(SHARDS)


def test_found_by_id_with_everything_models_json_needs(env):
    assert lookup_openrouter("qwen/qwen3-235b-a22b-2507") == {
        "provider": "Qwen",
        "url": "https://openrouter.ai/qwen/qwen3-235b-a22b-2507",
        "releaseDate": "2025-07-21",
        "price": {"input": 0.078, "output": 0.312},
        "size": TINY_CHAT_SIZE,  # from hugging_face_id: the repo's four safetensors shards
    }
    assert [s.path for s in env.openrouter.requests] == ["/api/v1/models"]
    assert info_requests(env) == [("/api/models/tiny-org/Tiny-Chat-8B/revision/main", "true")]
    assert not env.hub.cdn.requests


@pytest.mark.parametrize(
    "config, provider, url, price",
    [
        (
            {"provider": "openai", "model": "gpt-5.5", "baseUrl": None},
            "OpenAI",
            "https://openrouter.ai/openai/gpt-5.5",
            {"input": 1.25, "output": 10},
        ),
        (
            {"provider": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": None},
            "Anthropic",
            "https://openrouter.ai/anthropic/claude-sonnet-4.5",
            {"input": 3, "output": 15},
        ),
        (
            {
                "provider": "live",
                "model": "moonshotai/kimi-k2-0905",
                "baseUrl": "https://openrouter.ai/api/v1/",
            },
            "Moonshot AI",
            "https://openrouter.ai/moonshotai/kimi-k2-0905",
            {"input": 0.333333, "output": 2.5},
        ),
    ],
)
def test_lookup_by_vendor_model_and_openrouter_id(env, config, provider, url, price):
    found = lookup(config)
    assert (found["provider"], found["url"], found["price"]) == (provider, url, price)
    assert "size" not in found  # no hugging_face_id, or one the Hub does not have (moonshotai)
    assert all("authorization" not in s.headers for s in env.openrouter.requests)


def test_vendor_names_from_the_mapping_else_the_name_prefix(env):
    assert lookup_openrouter("x-ai/grok-4", sizes=False)["provider"] == "xAI"
    assert (
        lookup_openrouter("z-ai/glm-4.6", sizes=False)["provider"] == "Z.ai"
    )  # not the name's "Z.AI"
    assert lookup_openrouter("thedrummer/rocinante-12b")["provider"] == "TheDrummer"


def test_not_found_is_empty_not_an_error(env):
    assert lookup_openrouter("openai/gpt-9-ultra") == {}
    assert lookup({"provider": "openai", "model": "gpt-9-ultra", "baseUrl": None}) == {}
    # Runs OpenRouter does not serve ask nothing at all.
    assert (
        lookup({"provider": "live", "model": "my-finetune", "baseUrl": "http://127.0.0.1:8000/v1"})
        == {}
    )
    assert lookup({"provider": "reference", "model": "reference", "baseUrl": None}) == {}
    assert [s.path for s in env.openrouter.requests] == ["/api/v1/models", "/api/v1/models"]


def test_variable_price_is_left_out(env):
    found = lookup_openrouter("openrouter/auto")
    assert "price" not in found and found["provider"] == "OpenRouter"


def test_release_date_is_the_utc_day_of_created(env, monkeypatch):
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14: a local-time date would be a day later
    time.tzset()
    try:
        assert lookup_openrouter("x-ai/grok-4")["releaseDate"] == "2025-12-31"
        assert release_date(1753119555) == "2025-07-21"
        assert release_date(1753119555.5) == "2025-07-21"  # the docs type it as a double
        assert release_date(None) is None and release_date(0) is None and release_date(True) is None
    finally:
        monkeypatch.undo()
        time.tzset()


def test_openrouter_http_failures_are_one_line_metadata_errors(env, monkeypatch):
    env.openrouter_reply[0] = Reply(502, "<html>\n<h1>502 Bad Gateway</h1>\n</html>")
    with pytest.raises(
        MetadataError, match=r"HTTP 502; check the network, or set OPENROUTER_API_BASE"
    ) as error:
        lookup_openrouter("openai/gpt-5.5")
    one_line(error)
    env.openrouter_reply[0] = Reply(200, "<!doctype html>\n<title>OpenRouter</title>")
    with pytest.raises(MetadataError, match="not JSON") as error:
        lookup_openrouter("openai/gpt-5.5")
    one_line(error)
    env.openrouter_reply[0] = Reply(200, {"error": {"message": "Unauthorized", "code": 401}})
    with pytest.raises(MetadataError, match="did not answer OpenRouter's model list") as error:
        lookup_openrouter("openai/gpt-5.5")
    one_line(error)


def test_openrouter_server_down_is_a_metadata_error(env, monkeypatch):
    down = closed_port_url()
    monkeypatch.setenv("OPENROUTER_API_BASE", f"{down}/api/v1")
    with pytest.raises(
        MetadataError,
        match=rf"could not fetch the OpenRouter model list from {down} \(ConnectError",
    ) as error:
        lookup({"provider": "openai", "model": "gpt-5.5", "baseUrl": None})
    one_line(error)
    assert isinstance(error.value, EvalError)
    # An explicit base_url wins over the environment.
    assert (
        lookup_openrouter("openai/gpt-5.5", base_url=f"{env.openrouter.url}/api/v1")["provider"]
        == "OpenAI"
    )


# --- Hugging Face: weights sizes -------------------------------------------------------------


def test_single_lfs_file_is_sized_from_the_model_info_without_the_cdn(env):
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/blob/main/Tiny-Chat-8B-Q4_K_M.gguf"
    assert weights_size(link) == 4_920_739_232
    # One request: the file list with sizes (an LFS file's real size, not its pointer's); no download.
    assert info_requests(env) == [("/api/models/tiny-org/Tiny-Chat-8B-GGUF/revision/main", "true")]
    assert not env.hub.cdn.requests


def test_plain_file_at_a_commit(env):
    link = f"{env.hub.url}/tiny-org/Tiny-Chat-8B/resolve/{COMMIT}/config.json?download=true"
    assert weights_size(link) == 855
    assert info_requests(env) == [(f"/api/models/tiny-org/Tiny-Chat-8B/revision/{COMMIT}", "true")]


def test_renamed_repo_redirect_is_followed(env):
    link = "https://hf.co/old-org/Tiny-Chat-8B/resolve/main/model-00002-of-00004.safetensors"
    assert weights_size(link) == SHARDS[1]
    assert [path for path, _ in info_requests(env)] == [
        "/api/models/old-org/Tiny-Chat-8B/revision/main",
        "/api/models/tiny-org/Tiny-Chat-8B/revision/main",
    ]


@pytest.mark.parametrize("part", ["00001", "00003"])
def test_split_gguf_sums_all_three_parts(env, part):
    link = f"https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/blob/main/Q8_0/Tiny-Chat-8B-Q8_0-{part}-of-00003.gguf"
    assert weights_size(link) == sum(Q8_PARTS)
    assert len(env.hub.requests) == 1


def test_split_gguf_with_a_missing_part_is_an_error(env):
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/resolve/main/BF16/Tiny-Chat-8B-BF16-00001-of-00003.gguf"
    with pytest.raises(
        MetadataError, match=r"split GGUF part\(s\) 00003 of 00003 not found in BF16"
    ) as error:
        weights_size(link)
    assert link in one_line(error)


def test_folder_sums_weight_files_only(env):
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/main/checkpoints/step-1000"
    # Two .bin shards; config, tokenizer (an LFS file too), index, optimizer, scheduler,
    # rng state and training_args.bin do not count.
    assert weights_size(link) == sum(CKPT_BIN)
    assert len(env.hub.requests) == 1


def test_folder_of_split_gguf(env):
    assert weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/tree/main/Q8_0") == sum(
        Q8_PARTS
    )


def test_whole_repo_sums_its_safetensors(env):
    # Not original/consolidated.00.pth (the same weights again), not the tokenizer.
    assert weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B") == TINY_CHAT_SIZE
    assert (
        weights_size(f"https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/{COMMIT}")
        == TINY_CHAT_SIZE
    )
    assert info_requests(env) == [
        ("/api/models/tiny-org/Tiny-Chat-8B/revision/main", "true"),
        (f"/api/models/tiny-org/Tiny-Chat-8B/revision/{COMMIT}", "true"),
    ]


def test_whole_gguf_repo(env):
    # One model (the vision projector aside): its file.
    assert weights_size("https://huggingface.co/solo-org/Solo-3B-GGUF") == 2_019_377_696
    # Several quantizations: which one ran is not for the lookup to guess.
    with pytest.raises(
        MetadataError,
        match=r"holds 2 GGUF models \(Tiny-Chat-8B-Q4_K_M.gguf, Tiny-Chat-8B-Q6_K.gguf\); "
        r"expected a link to the file",
    ) as error:
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF")
    one_line(error)


def test_a_gated_repo_is_sized_without_a_token(env):
    # The Hub lists a gated repo's files to anyone; only downloading them needs access.
    assert (
        weights_size("https://huggingface.co/gated-org/Locked-70B/blob/main/model.safetensors")
        == 141_107_412_480
    )
    assert "authorization" not in env.hub.requests[-1].headers


def test_hf_token_is_sent_and_never_printed(env, monkeypatch):
    link = "https://huggingface.co/private-org/Own-7B"
    with pytest.raises(MetadataError) as anonymous:
        weights_size(link)
    assert one_line(anonymous) == (
        f"{link}: no model repo private-org/Own-7B on the Hub at {env.hub.url} (HTTP 401 RepoNotFound); "
        "check the name; if the repo is private, set HF_TOKEN or run `hf auth login`"
    )
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert weights_size(link) == 15_231_233_024
    assert env.hub.requests[-1].headers["authorization"] == f"Bearer {TOKEN}"
    monkeypatch.setenv("HF_TOKEN", TOKEN + "-revoked")
    with pytest.raises(
        MetadataError,
        match=r"\(HTTP 404 RepoNotFound\); check the name, or that the token in use "
        r"\(HF_TOKEN or `hf auth login`\) can see it",
    ) as refused:
        weights_size(link)
    with pytest.raises(MetadataError) as missing:
        weights_size("https://huggingface.co/gated-org/Locked-70B/blob/main/missing.safetensors")
    for message in (one_line(anonymous), one_line(refused), one_line(missing)):
        assert TOKEN not in message and "Bearer" not in message
    assert not env.hub.cdn.requests  # the token never leaves the Hub either


def test_404_link_is_a_one_line_error_naming_link_and_expectation(env):
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B/blob/main/model-00009-of-00009.safetensors"
    with pytest.raises(MetadataError) as error:
        weights_size(link)
    assert one_line(error) == (
        f"{link}: tiny-org/Tiny-Chat-8B: model-00009-of-00009.safetensors not found; "
        "expected a file in a model repo"
    )
    with pytest.raises(
        MetadataError,
        match=r"no model repo nobody/nothing on the Hub at .* \(HTTP 401 RepoNotFound\)",
    ):
        weights_size("https://huggingface.co/nobody/nothing")
    with pytest.raises(
        MetadataError,
        match=r"model repo tiny-org/Tiny-Chat-8B has no revision 'v9' \(HTTP 404 RevisionNotFound\)",
    ):
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/v9/checkpoints")
    with pytest.raises(
        MetadataError, match=r"tiny-org/Tiny-Chat-8B: nope not found; expected a folder"
    ):
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/main/nope")
    with pytest.raises(
        MetadataError,
        match=r"no weight files \(\.safetensors, .*\) in folder assets; expected a folder",
    ):
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/main/assets")


@pytest.mark.parametrize(
    "link",
    [
        "https://github.com/tiny-org/Tiny-Chat-8B",
        "https://huggingface.co/tiny-org",
        "https://huggingface.co/datasets/tiny-org/robloxqa",
        "https://huggingface.co/spaces/tiny-org/demo",
        "https://huggingface.co/tiny-org/Tiny-Chat-8B/blob/main",
        "https://huggingface.co/tiny-org/Tiny-Chat-8B/commits/main",
        "ftp://huggingface.co/tiny-org/Tiny-Chat-8B",
        "",
    ],
)
def test_bad_links_name_the_link_and_the_expected_shapes(env, link):
    with pytest.raises(MetadataError, match="expected https://huggingface.co/ORG/REPO") as error:
        weights_size(link)
    assert repr(link) in one_line(error) or not link
    assert not env.hub.requests


def test_hub_down_is_a_metadata_error(env, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", closed_port_url())
    with pytest.raises(
        MetadataError,
        match=r"could not reach the Hub at http://127\.0\.0\.1:\d+ \(ConnectError.*\); "
        r"check the network, or set HF_ENDPOINT$",
    ) as error:
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B")
    one_line(error)
    # Inside an OpenRouter lookup the size is a bonus: left out, the rest still found.
    assert lookup_openrouter("qwen/qwen3-235b-a22b-2507")["price"] == {
        "input": 0.078,
        "output": 0.312,
    }
    assert "size" not in lookup_openrouter("qwen/qwen3-235b-a22b-2507")


def test_lookup_sizes_the_weights_link_it_is_given(env):
    config = {
        "provider": "live",
        "model": "qwen/qwen3-235b-a22b-2507",
        "baseUrl": "https://openrouter.ai/api/v1",
    }
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/blob/main/Q8_0/Tiny-Chat-8B-Q8_0-00001-of-00003.gguf"
    found = lookup(config, link)
    assert found["size"] == sum(Q8_PARTS) and found["provider"] == "Qwen"
    assert not any(
        s.path.startswith("/api/models/tiny-org/Tiny-Chat-8B") and "GGUF" not in s.path
        for s in env.hub.requests
    )  # the given link replaces the hugging_face_id lookup
    # A local server with its weights link: the size, nothing from OpenRouter.
    local = {"provider": "live", "model": "tiny-chat", "baseUrl": "http://127.0.0.1:8000/v1"}
    assert lookup(local, "https://huggingface.co/tiny-org/Tiny-Chat-8B") == {"size": TINY_CHAT_SIZE}
    # A page that is not weights (a Space, GitHub) is no size and no error.
    assert lookup(local, "https://huggingface.co/spaces/tiny-org/demo") == {}
    assert lookup(local, "https://github.com/tiny-org/tiny-chat") == {}
    with pytest.raises(MetadataError, match="not found"):
        lookup(local, "https://huggingface.co/tiny-org/Tiny-Chat-8B/blob/main/gone.gguf")


def test_a_given_client_is_used_and_left_open(env):
    with httpx.Client() as client:
        assert lookup_openrouter("openai/gpt-5.5", client=client)["provider"] == "OpenAI"
        assert (
            lookup(
                {"provider": "openai", "model": "gpt-5.5"},
                "https://huggingface.co/tiny-org/Tiny-Chat-8B",
                client=client,
            )["size"]
            == TINY_CHAT_SIZE
        )
        assert not client.is_closed


def test_offline_the_hub_is_not_asked(env, monkeypatch, tmp_path):
    use_hub(monkeypatch, tmp_path / "hf", env.hub.url, offline=True)
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B"
    with pytest.raises(MetadataError) as error:
        weights_size(link)
    assert one_line(error) == (
        f"{link}: HF_HUB_OFFLINE is set, so the Hub is not asked for tiny-org/Tiny-Chat-8B@main; "
        "unset HF_HUB_OFFLINE"
    )
    assert not env.hub.requests
