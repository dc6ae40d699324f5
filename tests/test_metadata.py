"""Model metadata lookups (evals.metadata) against loopback servers that speak the real wire
shapes: OpenRouter's `GET /api/v1/models`, the Hugging Face Hub's model info (`?blobs=true`),
tree listing (paged by a Link header) and `HEAD .../resolve/...` (302 to a CDN with
X-Linked-Size for LFS files, 200 with Content-Length for plain ones, a relative 307 for a
renamed repo, X-Error-Code on errors), and a CDN that must never be asked."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import httpx
import pytest

from evals.errors import EvalError
from evals.metadata import (
    MetadataError,
    find_model,
    lookup,
    lookup_openrouter,
    parse_hf_link,
    per_million,
    release_date,
    weights_size,
)

COMMIT = "5f0b02c75b57c5855da9ae460ce51323ea669d8a"
TOKEN = "fake-hub-token-never-printed"


# --- the loopback servers --------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    method: str
    path: str  # percent-decoded, without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # keys lowercased


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict | list | str = b""
    headers: dict[str, str] | None = None


class Loopback:
    """A stdlib HTTP server on 127.0.0.1 in a daemon thread: `route(seen) -> Reply`, every request recorded."""

    def __init__(self, route: Callable[[Seen], Reply]):
        self.seen: list[Seen] = []
        self.route = route
        outer = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms stalls between them

            def do_GET(self) -> None:
                self._answer(body=True)

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def _answer(self, *, body: bool) -> None:
                parts = urlsplit(self.path)
                seen = Seen(self.command, unquote(parts.path), parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()})
                outer.seen.append(seen)
                reply = outer.route(seen)
                payload = reply.body
                headers = dict(reply.headers or {})
                if isinstance(payload, (dict, list)):
                    payload = json.dumps(payload).encode()
                    headers.setdefault("Content-Type", "application/json; charset=utf-8")
                elif isinstance(payload, str):
                    payload = payload.encode()
                    headers.setdefault("Content-Type", "text/plain; charset=utf-8")
                headers.setdefault("Content-Length", str(len(payload)))
                self.send_response(reply.status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if body:
                    self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- OpenRouter: the model list --------------------------------------------------------------


def openrouter_model(model_id: str, name: str, created: int, prompt: str, completion: str, *,
                     hugging_face_id: str | None = "", context: int = 131072) -> dict:
    """One entry of OpenRouter's `data`, with the fields the real list carries."""
    return {
        "id": model_id,
        "canonical_slug": model_id.split(":")[0],
        "hugging_face_id": hugging_face_id,
        "name": name,
        "created": created,
        "description": f"{name} via OpenRouter.",
        "context_length": context,
        "architecture": {"modality": "text->text", "input_modalities": ["text"], "output_modalities": ["text"],
                         "tokenizer": "Other", "instruct_type": None},
        "pricing": {"prompt": prompt, "completion": completion, "request": "0", "image": "0",
                    "web_search": "0", "internal_reasoning": "0"},
        "top_provider": {"context_length": context, "max_completion_tokens": 16384, "is_moderated": False},
        "per_request_limits": None,
        "supported_parameters": ["max_tokens", "temperature", "top_p", "tools"],
        "default_parameters": {},
    }


MODELS = [
    openrouter_model("openai/gpt-5.5", "OpenAI: GPT-5.5", 1772582400, "0.00000125", "0.00001",
                     context=400000),
    openrouter_model("anthropic/claude-sonnet-4.5", "Anthropic: Claude Sonnet 4.5", 1759161676,
                     "0.000003", "0.000015", hugging_face_id=None),
    openrouter_model("anthropic/claude-3.7-sonnet:beta", "Anthropic: Claude 3.7 Sonnet (self-moderated)",
                     1740422110, "0.000003", "0.000015"),
    openrouter_model("qwen/qwen3-235b-a22b-2507", "Qwen: Qwen3 235B A22B Instruct 2507", 1753119555,
                     "0.000000078", "0.000000312", hugging_face_id="tiny-org/Tiny-Chat-8B"),
    openrouter_model("qwen/qwen3-235b-a22b-2507:free", "Qwen: Qwen3 235B A22B Instruct 2507 (free)", 1753119555,
                     "0", "0", hugging_face_id="tiny-org/Tiny-Chat-8B"),
    openrouter_model("z-ai/glm-4.6", "Z.AI: GLM 4.6", 1759235576, "0.0000004", "0.00000175",
                     hugging_face_id="gated-org/Locked-70B"),
    openrouter_model("moonshotai/kimi-k2-0905", "MoonshotAI: Kimi K2 0905", 1757021147,
                     "0.000000333333333", "0.0000025", hugging_face_id="moonshotai/Kimi-K2-Instruct-0905"),
    openrouter_model("thedrummer/rocinante-12b", "TheDrummer: Rocinante 12B", 1727654400,
                     "0.00000017", "0.00000043"),
    # Midnight UTC minus one second: a local-time conversion would give another day.
    openrouter_model("x-ai/grok-4", "xAI: Grok 4", 1767225599, "0.000003", "0.000015"),
    openrouter_model("openrouter/auto", "Auto Router", 1699401600, "-1", "-1", hugging_face_id=None),
]


# --- the Hub: repos, files, answers ----------------------------------------------------------

GB = 1_000_000_000


@dataclass(frozen=True)
class File:
    size: int
    lfs: bool


def _files(**named: File) -> dict[str, File]:
    return named


SHARDS = [4_976_698_672, 4_999_802_720, 4_915_916_176, 1_168_138_808]
Q8_PARTS = [3_998_766_432, 3_987_611_520, 537_120_128]
CKPT_BIN = [9_976_576_152, 3_500_296_424]

REPOS: dict[str, dict[str, File]] = {
    "tiny-org/Tiny-Chat-8B": {
        ".gitattributes": File(1_519, False),
        "README.md": File(38_812, False),
        "LICENSE": File(7_627, False),
        "config.json": File(855, False),
        "generation_config.json": File(184, False),
        **{f"model-{i:05d}-of-00004.safetensors": File(size, True) for i, size in enumerate(SHARDS, 1)},
        "model.safetensors.index.json": File(23_950, False),
        "tokenizer.json": File(9_085_657, True),
        "tokenizer_config.json": File(55_351, False),
        "special_tokens_map.json": File(296, False),
        "original/consolidated.00.pth": File(16_060_617_592, True),
        "original/params.json": File(199, False),
        "original/tokenizer.model": File(2_183_982, True),
        # A training checkpoint: two .bin shards among config, tokenizer and trainer state.
        "checkpoints/step-1000/config.json": File(855, False),
        "checkpoints/step-1000/generation_config.json": File(184, False),
        "checkpoints/step-1000/pytorch_model-00001-of-00002.bin": File(CKPT_BIN[0], True),
        "checkpoints/step-1000/pytorch_model-00002-of-00002.bin": File(CKPT_BIN[1], True),
        "checkpoints/step-1000/pytorch_model.bin.index.json": File(23_950, False),
        "checkpoints/step-1000/tokenizer.json": File(9_085_657, True),
        "checkpoints/step-1000/tokenizer_config.json": File(55_351, False),
        "checkpoints/step-1000/special_tokens_map.json": File(296, False),
        "checkpoints/step-1000/training_args.bin": File(5_368, True),
        "checkpoints/step-1000/optimizer.pt": File(27_000_000_000, True),
        "checkpoints/step-1000/scheduler.pt": File(1_064, True),
        "checkpoints/step-1000/rng_state.pth": File(14_244, True),
        "checkpoints/step-1000/trainer_state.json": File(4_096, False),
        "assets/chat_template.jinja": File(4_711, False),
        "assets/logo.png": File(183_204, True),
    },
    "tiny-org/Tiny-Chat-8B-GGUF": {
        ".gitattributes": File(2_049, False),
        "README.md": File(12_730, False),
        "Tiny-Chat-8B-Q4_K_M.gguf": File(4_920_739_232, True),
        "Tiny-Chat-8B-Q6_K.gguf": File(6_596_006_112, True),
        **{f"Q8_0/Tiny-Chat-8B-Q8_0-{i:05d}-of-00003.gguf": File(size, True) for i, size in enumerate(Q8_PARTS, 1)},
        # Part 2 of a split that lost a part: only parts 1 and 2 of 3 are there.
        "BF16/Tiny-Chat-8B-BF16-00001-of-00003.gguf": File(7_000_000_000, True),
        "BF16/Tiny-Chat-8B-BF16-00002-of-00003.gguf": File(7_000_000_000, True),
        "params": File(193, False),
    },
    "solo-org/Solo-3B-GGUF": {
        "README.md": File(4_120, False),
        "solo-3b-q4_k_m.gguf": File(2_019_377_696, True),
        "mmproj-solo-3b-f16.gguf": File(851_251_104, True),
    },
    "gated-org/Locked-70B": {
        "config.json": File(700, False),
        "model.safetensors": File(141_107_412_480, True),
    },
}
GATED = {"gated-org/Locked-70B"}
RENAMED = {"old-org/Tiny-Chat-8B": "tiny-org/Tiny-Chat-8B"}
TREE_PAGE = 4  # small pages, so that folder listings go through the Link header


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _tree_entry(path: str, file: File | None) -> dict:
    if file is None:
        return {"type": "directory", "oid": _sha1("dir:" + path), "size": 0, "path": path}
    entry = {"type": "file", "oid": _sha1(path), "size": file.size, "path": path}
    if file.lfs:
        entry["lfs"] = {"oid": _sha256(path), "size": file.size, "pointerSize": 135}
        entry["xetHash"] = _sha256("xet:" + path)
    return entry


def _sibling(path: str, file: File, blobs: bool) -> dict:
    if not blobs:
        return {"rfilename": path}
    sibling = {"rfilename": path, "blobId": _sha1(path), "size": file.size}
    if file.lfs:
        sibling["lfs"] = {"sha256": _sha256(path), "size": file.size, "pointerSize": 135}
    return sibling


class Hub:
    """The Hub's routes: model info, tree (paged) and resolve; errors as the Hub sends them."""

    def __init__(self, cdn_url: str):
        self.cdn_url = cdn_url
        self.url = ""  # set once the server is up

    def __call__(self, seen: Seen) -> Reply:
        if seen.path.startswith("/api/models/"):
            return self.api(seen, seen.path[len("/api/models/"):].split("/"))
        parts = seen.path.strip("/").split("/")
        if len(parts) >= 5 and parts[2] == "resolve":
            return self.resolve(seen, "/".join(parts[:2]), parts[3], "/".join(parts[4:]))
        return Reply(404, "Not Found", {"X-Error-Code": "EntryNotFound"})

    def denied(self, seen: Seen, repo: str) -> Reply | None:
        if repo in GATED and seen.headers.get("authorization") != f"Bearer {TOKEN}":
            return Reply(401, {"error": f"Access to model {repo} is restricted. You must have access to it and be "
                                        "authenticated to access it. Please log in."},
                         {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access restricted"})
        if repo not in REPOS:
            return Reply(401, {"error": "Repository not found"},
                         {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Invalid username or password."})
        return None

    def api(self, seen: Seen, parts: list[str]) -> Reply:
        repo, rest = "/".join(parts[:2]), parts[2:]
        if (refused := self.denied(seen, repo)) is not None:
            return refused
        if not rest or rest[0] == "revision":
            revision = rest[1] if rest else "main"
            if revision not in ("main", COMMIT):
                return Reply(404, {"error": f"Invalid rev id: {revision}"}, {"X-Error-Code": "RevisionNotFound"})
            blobs = seen.query.get("blobs") == ["true"]
            files = REPOS[repo]
            return Reply(200, {
                "_id": _sha1(repo)[:24], "id": repo, "modelId": repo, "author": repo.split("/")[0],
                "sha": COMMIT, "lastModified": "2025-07-21T12:00:00.000Z", "createdAt": "2025-07-01T09:30:00.000Z",
                "private": False, "disabled": False, "gated": "manual" if repo in GATED else False,
                "downloads": 120_345, "likes": 321, "library_name": "transformers",
                "tags": ["transformers", "safetensors", "text-generation", "conversational"],
                "pipeline_tag": "text-generation",
                "siblings": [_sibling(p, f, blobs) for p, f in files.items()],
                "spaces": [], "usedStorage": sum(f.size for f in files.values()),
            })
        if rest[0] == "tree" and len(rest) >= 2:
            return self.tree(seen, repo, rest[1], "/".join(rest[2:]).strip("/"))
        return Reply(404, {"error": "Sorry, we can't find the page you are looking for."})

    def tree(self, seen: Seen, repo: str, revision: str, folder: str) -> Reply:
        if revision not in ("main", COMMIT):
            return Reply(404, {"error": f"Invalid rev id: {revision}"}, {"X-Error-Code": "RevisionNotFound"})
        recursive = seen.query.get("recursive") == ["true"]
        prefix = f"{folder}/" if folder else ""
        paths = [p for p in REPOS[repo] if p.startswith(prefix)]
        if folder and not paths:
            return Reply(404, {"error": f"{folder} does not exist on \"{revision}\""}, {"X-Error-Code": "EntryNotFound"})
        entries: dict[str, File | None] = {}
        for path in paths:
            rest = path[len(prefix):].split("/")
            for depth in range(1, len(rest)):  # the folders on the way
                if recursive or depth == 1:
                    entries.setdefault(prefix + "/".join(rest[:depth]), None)
            if recursive or len(rest) == 1:
                entries[path] = REPOS[repo][path]
        listing = [_tree_entry(p, f) for p, f in sorted(entries.items())]
        start = int(base64.urlsafe_b64decode(seen.query["cursor"][0]).decode()) if "cursor" in seen.query else 0
        page = listing[start:start + TREE_PAGE]
        headers = {}
        if start + TREE_PAGE < len(listing):
            cursor = base64.urlsafe_b64encode(str(start + TREE_PAGE).encode()).decode()
            query = f"recursive=true&cursor={cursor}" if recursive else f"cursor={cursor}"
            headers["Link"] = f'<{self.url}{seen.path}?{query}>; rel="next"'
        return Reply(200, page, headers)

    def resolve(self, seen: Seen, repo: str, revision: str, path: str) -> Reply:
        if repo in RENAMED:  # a renamed repo: a relative redirect to the new name
            new = f"/{RENAMED[repo]}/resolve/{revision}/{path}"
            return Reply(307, f"Temporary Redirect. Redirecting to {new}", {"Location": new})
        if (refused := self.denied(seen, repo)) is not None:
            return refused
        if revision not in ("main", COMMIT):
            return Reply(404, "Invalid rev id", {"X-Error-Code": "RevisionNotFound"})
        file = REPOS[repo].get(path)
        if file is None:
            return Reply(404, "Entry not found", {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found"})
        common = {"X-Repo-Commit": COMMIT, "Accept-Ranges": "bytes", "Vary": "Origin, Accept"}
        if file.lfs:
            location = (f"{self.cdn_url}/xet-bridge-us/{_sha256(path)}?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                        f"&X-Amz-Expires=3600&X-Amz-Signature={_sha256('sig' + path)}")
            return Reply(302, f"Found. Redirecting to {location}", common | {
                "Location": location, "X-Linked-Size": str(file.size), "X-Linked-ETag": f'"{_sha256(path)}"',
                "ETag": f'W/"{_sha1(path)[:20]}"', "X-Xet-Hash": _sha256("xet:" + path)})
        return Reply(200, b"x" * file.size, common | {
            "ETag": f'"{_sha1(path)}"', "Content-Type": "application/json; charset=utf-8" if path.endswith(".json")
            else "text/plain; charset=utf-8"})


@dataclass
class Servers:
    openrouter: Loopback
    hub: Loopback
    cdn: Loopback
    openrouter_reply: list[Reply | None]  # a fault to send instead of the model list

    def hub_requests(self) -> list[Seen]:
        return self.hub.seen


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    cdn = Loopback(lambda seen: Reply(200, b"", {"Content-Length": "1"}))  # a wrong size: must not be asked
    hub_routes = Hub(cdn.url)
    hub = Loopback(hub_routes)
    hub_routes.url = hub.url
    fault: list[Reply | None] = [None]
    openrouter = Loopback(lambda seen: fault[0] or (Reply(200, {"data": MODELS}) if seen.path == "/api/v1/models"
                                                    else Reply(404, {"error": {"message": "Not Found", "code": 404}})))
    yield Servers(openrouter, hub, cdn, fault)
    for server in (openrouter, hub, cdn):
        server.close()


@pytest.fixture
def env(servers: Servers, monkeypatch: pytest.MonkeyPatch) -> Servers:
    monkeypatch.setenv("OPENROUTER_API_BASE", f"{servers.openrouter.url}/api/v1")
    monkeypatch.setenv("HF_ENDPOINT", servers.hub.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    for server in (servers.openrouter, servers.hub, servers.cdn):
        server.seen.clear()
    servers.openrouter_reply[0] = None
    return servers


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message and message.strip() == message and message
    return message


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
    assert [s.path for s in env.openrouter.seen] == ["/api/v1/models"]
    info = [s for s in env.hub.seen if s.path == "/api/models/tiny-org/Tiny-Chat-8B"]
    assert info and info[0].query == {"blobs": ["true"]}
    assert not env.cdn.seen


@pytest.mark.parametrize("asked, found", [
    ("QWEN/Qwen3-235B-A22B-2507", "qwen/qwen3-235b-a22b-2507"),  # case-insensitively
    ("qwen/qwen3-235b-a22b-2507:free", "qwen/qwen3-235b-a22b-2507:free"),  # an exact variant wins
    ("z-ai/glm-4.6:free", "z-ai/glm-4.6"),  # no free variant listed: the model without the suffix
    ("anthropic/claude-3.7-sonnet", "anthropic/claude-3.7-sonnet:beta"),  # only the :beta variant listed
    ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4.5"),  # Anthropic's dashes, OpenRouter's dots
    ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5"),  # a dated snapshot
])
def test_id_variants_find_the_model(asked, found):
    assert find_model(MODELS, asked)["id"] == found


@pytest.mark.parametrize("config, provider, url, price", [
    ({"provider": "openai", "model": "gpt-5.5", "baseUrl": None}, "OpenAI", "https://openrouter.ai/openai/gpt-5.5",
     {"input": 1.25, "output": 10}),
    ({"provider": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": None}, "Anthropic",
     "https://openrouter.ai/anthropic/claude-sonnet-4.5", {"input": 3, "output": 15}),
    ({"provider": "live", "model": "moonshotai/kimi-k2-0905", "baseUrl": "https://openrouter.ai/api/v1/"},
     "Moonshot AI", "https://openrouter.ai/moonshotai/kimi-k2-0905", {"input": 0.333333, "output": 2.5}),
])
def test_lookup_by_vendor_model_and_openrouter_id(env, config, provider, url, price):
    found = lookup(config)
    assert (found["provider"], found["url"], found["price"]) == (provider, url, price)
    assert "size" not in found  # no hugging_face_id, or one the Hub does not have (moonshotai)
    assert all("authorization" not in s.headers for s in env.openrouter.seen)


def test_vendor_names_from_the_mapping_else_the_name_prefix(env):
    assert lookup_openrouter("x-ai/grok-4", sizes=False)["provider"] == "xAI"
    assert lookup_openrouter("z-ai/glm-4.6", sizes=False)["provider"] == "Z.ai"  # not the name's "Z.AI"
    assert lookup_openrouter("thedrummer/rocinante-12b")["provider"] == "TheDrummer"


def test_not_found_is_empty_not_an_error(env):
    assert lookup_openrouter("openai/gpt-9-ultra") == {}
    assert lookup({"provider": "openai", "model": "gpt-9-ultra", "baseUrl": None}) == {}
    # Runs OpenRouter does not serve ask nothing at all.
    assert lookup({"provider": "live", "model": "my-finetune", "baseUrl": "http://127.0.0.1:8000/v1"}) == {}
    assert lookup({"provider": "reference", "model": "reference", "baseUrl": None}) == {}
    assert [s.path for s in env.openrouter.seen] == ["/api/v1/models", "/api/v1/models"]


@pytest.mark.parametrize("per_token, expected", [
    ("0.00000125", 1.25),
    ("0.00001", 10),
    ("0.000000078", 0.078),  # 0.000000078 * 1e6 is 0.07800000000000001 in floats
    ("1e-7", 0.1),  # 0.09999999999999999 in floats
    ("0.000000333333333", 0.333333),  # six significant digits
    ("0.0000000713", 0.0713),
    ("0", 0),
    ("-1", None),  # openrouter/auto: variable
    ("", None),
    (None, None),
])
def test_price_per_token_to_per_million_without_float_noise(per_token, expected):
    assert per_million(per_token) == expected
    if expected is not None:
        assert repr(per_million(per_token)) == repr(expected)


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
    with pytest.raises(MetadataError, match=r"HTTP 502; check the network, or set OPENROUTER_API_BASE") as error:
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
    with pytest.raises(MetadataError, match=rf"could not fetch the OpenRouter model list from {down} \(ConnectError") as error:
        lookup({"provider": "openai", "model": "gpt-5.5", "baseUrl": None})
    one_line(error)
    assert isinstance(error.value, EvalError)
    # An explicit base_url wins over the environment.
    assert lookup_openrouter("openai/gpt-5.5", base_url=f"{env.openrouter.url}/api/v1")["provider"] == "OpenAI"


# --- Hugging Face: weights sizes -------------------------------------------------------------


def test_single_lfs_file_is_sized_by_x_linked_size_without_the_cdn(env):
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/blob/main/Tiny-Chat-8B-Q4_K_M.gguf"
    assert weights_size(link) == 4_920_739_232
    heads = [s for s in env.hub.seen if s.method == "HEAD"]
    assert [s.path for s in heads] == ["/tiny-org/Tiny-Chat-8B-GGUF/resolve/main/Tiny-Chat-8B-Q4_K_M.gguf"]
    assert heads[0].headers.get("accept-encoding") == "identity"
    assert not env.cdn.seen  # the redirect's X-Linked-Size is the size; the CDN is never asked


def test_plain_file_is_sized_by_content_length(env):
    link = f"{env.hub.url}/tiny-org/Tiny-Chat-8B/resolve/{COMMIT}/config.json?download=true"
    assert weights_size(link) == 855
    assert env.hub.seen[-1].path == f"/tiny-org/Tiny-Chat-8B/resolve/{COMMIT}/config.json"


def test_renamed_repo_relative_redirect_is_followed(env):
    link = "https://hf.co/old-org/Tiny-Chat-8B/resolve/main/model-00002-of-00004.safetensors"
    assert weights_size(link) == SHARDS[1]
    assert [s.path for s in env.hub.seen] == ["/old-org/Tiny-Chat-8B/resolve/main/model-00002-of-00004.safetensors",
                                              "/tiny-org/Tiny-Chat-8B/resolve/main/model-00002-of-00004.safetensors"]


@pytest.mark.parametrize("part", ["00001", "00003"])
def test_split_gguf_sums_all_three_parts(env, part):
    link = f"https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/blob/main/Q8_0/Tiny-Chat-8B-Q8_0-{part}-of-00003.gguf"
    assert weights_size(link) == sum(Q8_PARTS)
    trees = [s for s in env.hub.seen if "/tree/" in s.path]
    assert trees[0].path == "/api/models/tiny-org/Tiny-Chat-8B-GGUF/tree/main/Q8_0"
    assert not any(s.method == "HEAD" for s in env.hub.seen)


def test_split_gguf_with_a_missing_part_is_an_error(env):
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/resolve/main/BF16/Tiny-Chat-8B-BF16-00001-of-00003.gguf"
    with pytest.raises(MetadataError, match=r"split GGUF part\(s\) 00003 of 00003 not found in BF16") as error:
        weights_size(link)
    assert link in one_line(error)


def test_folder_sums_weight_files_only_across_pages(env):
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/main/checkpoints/step-1000"
    # Two .bin shards; config, tokenizer (an LFS file too), index, optimizer, scheduler,
    # rng state and training_args.bin do not count.
    assert weights_size(link) == sum(CKPT_BIN)
    pages = [s for s in env.hub.seen if s.path == "/api/models/tiny-org/Tiny-Chat-8B/tree/main/checkpoints/step-1000"]
    assert len(pages) == 4 and all(s.query.get("recursive") == ["true"] for s in pages)  # 14 entries, 4 a page
    assert "cursor" not in pages[0].query and "cursor" in pages[1].query


def test_folder_of_split_gguf(env):
    assert weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/tree/main/Q8_0") == sum(Q8_PARTS)


def test_whole_repo_sums_its_safetensors(env):
    # Not original/consolidated.00.pth (the same weights again), not the tokenizer.
    assert weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B") == TINY_CHAT_SIZE
    assert weights_size(f"https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/{COMMIT}") == TINY_CHAT_SIZE
    assert [(s.path, s.query) for s in env.hub.seen] == [
        ("/api/models/tiny-org/Tiny-Chat-8B", {"blobs": ["true"]}),
        (f"/api/models/tiny-org/Tiny-Chat-8B/revision/{COMMIT}", {"blobs": ["true"]}),
    ]


def test_whole_gguf_repo(env):
    # One model (the vision projector aside): its file.
    assert weights_size("https://huggingface.co/solo-org/Solo-3B-GGUF") == 2_019_377_696
    # Several quantizations: which one ran is not for the lookup to guess.
    with pytest.raises(MetadataError, match=r"holds 2 GGUF models \(Tiny-Chat-8B-Q4_K_M.gguf, Tiny-Chat-8B-Q6_K.gguf\); "
                                            r"expected a link to the file") as error:
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF")
    one_line(error)


def test_hf_token_is_sent_and_never_printed(env, monkeypatch):
    link = "https://huggingface.co/gated-org/Locked-70B/blob/main/model.safetensors"
    with pytest.raises(MetadataError, match="gated or private .*set HF_TOKEN to a token with access") as error:
        weights_size(link)
    one_line(error)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert weights_size(link) == 141_107_412_480
    assert env.hub.seen[-1].headers["authorization"] == f"Bearer {TOKEN}"
    monkeypatch.setenv("HF_TOKEN", TOKEN + "-revoked")
    with pytest.raises(MetadataError, match="HF_TOKEN is set but has no access") as error:
        weights_size(link)
    with pytest.raises(MetadataError) as missing:
        weights_size("https://huggingface.co/gated-org/Locked-70B/blob/main/missing.safetensors")
    for message in (one_line(error), one_line(missing)):
        assert TOKEN not in message and "Bearer" not in message
    assert not env.cdn.seen  # the token never leaves the Hub either


def test_404_link_is_a_one_line_error_naming_link_and_expectation(env):
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B/blob/main/model-00009-of-00009.safetensors"
    with pytest.raises(MetadataError) as error:
        weights_size(link)
    assert one_line(error) == (f"{link}: tiny-org/Tiny-Chat-8B: model-00009-of-00009.safetensors not found "
                               "(HTTP 404 EntryNotFound); expected a file in a model repo")
    with pytest.raises(MetadataError, match=r"no model repo nobody/nothing on the Hub \(HTTP 401 RepoNotFound\)"):
        weights_size("https://huggingface.co/nobody/nothing")
    with pytest.raises(MetadataError, match=r"no revision 'v9' in tiny-org/Tiny-Chat-8B"):
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/v9/checkpoints")
    with pytest.raises(MetadataError, match=r"tiny-org/Tiny-Chat-8B: nope not found \(HTTP 404 EntryNotFound\); "
                                            r"expected a folder"):
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/main/nope")
    with pytest.raises(MetadataError, match=r"no weight files \(\.safetensors, .*\) in folder assets; expected a folder"):
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B/tree/main/assets")


@pytest.mark.parametrize("link", [
    "https://github.com/tiny-org/Tiny-Chat-8B",
    "https://huggingface.co/tiny-org",
    "https://huggingface.co/datasets/tiny-org/robloxqa",
    "https://huggingface.co/spaces/tiny-org/demo",
    "https://huggingface.co/tiny-org/Tiny-Chat-8B/blob/main",
    "https://huggingface.co/tiny-org/Tiny-Chat-8B/commits/main",
    "ftp://huggingface.co/tiny-org/Tiny-Chat-8B",
    "",
])
def test_bad_links_name_the_link_and_the_expected_shapes(env, link):
    with pytest.raises(MetadataError, match="expected https://huggingface.co/ORG/REPO") as error:
        weights_size(link)
    assert repr(link) in one_line(error) or not link
    assert not env.hub.seen


def test_link_parsing():
    assert parse_hf_link("huggingface.co/a/b/resolve/refs%2Fpr%2F3/sub/w.gguf").revision == "refs/pr/3"
    ref = parse_hf_link("https://hf.co/a/b/tree/main/Q4_K_M/")
    assert (ref.repo, ref.kind, ref.revision, ref.path) == ("a/b", "folder", "main", "Q4_K_M")
    mirror = parse_hf_link("https://mirror.example/hf/a/b/blob/main/x.safetensors", "https://mirror.example/hf")
    assert (mirror.repo, mirror.kind, mirror.path) == ("a/b", "file", "x.safetensors")


def test_hub_down_is_a_metadata_error(env, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", closed_port_url())
    with pytest.raises(MetadataError, match=r"could not reach http://127\.0\.0\.1:\d+ \(ConnectError") as error:
        weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B")
    one_line(error)
    # Inside an OpenRouter lookup the size is a bonus: left out, the rest still found.
    assert lookup_openrouter("qwen/qwen3-235b-a22b-2507")["price"] == {"input": 0.078, "output": 0.312}
    assert "size" not in lookup_openrouter("qwen/qwen3-235b-a22b-2507")


def test_lookup_sizes_the_weights_link_it_is_given(env):
    config = {"provider": "live", "model": "qwen/qwen3-235b-a22b-2507", "baseUrl": "https://openrouter.ai/api/v1"}
    link = "https://huggingface.co/tiny-org/Tiny-Chat-8B-GGUF/blob/main/Q8_0/Tiny-Chat-8B-Q8_0-00001-of-00003.gguf"
    found = lookup(config, link)
    assert found["size"] == sum(Q8_PARTS) and found["provider"] == "Qwen"
    assert not any(s.path.startswith("/api/models/tiny-org/Tiny-Chat-8B") and "GGUF" not in s.path
                   for s in env.hub.seen)  # the given link replaces the hugging_face_id lookup
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
        assert weights_size("https://huggingface.co/tiny-org/Tiny-Chat-8B", client=client) == TINY_CHAT_SIZE
        assert not client.is_closed
