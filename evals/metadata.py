"""Look up what a new model's leaderboard entry leaves out: the vendor, a page, the release
date and the prices (OpenRouter's public model list), and the size of the weights (the
Hugging Face Hub). OpenRouter is asked through httpx, the Hub through its own client library
(`evals.hub`); every failure is one `MetadataError` line that names what was asked and what to do.

Wire shapes relied on:
  OpenRouter  GET {base}/models -> {"data": [{"id": "openai/gpt-5.5", "name": "OpenAI: GPT-5.5",
              "created": <unix seconds>, "pricing": {"prompt": "<USD per token>", "completion":
              "<USD per token>", ...}, "hugging_face_id": "org/repo" | "" | null, ...}]}; public,
              no key. A price of "-1" means "variable" (openrouter/auto).
  Hub         through huggingface_hub: HfApi.model_info(repo, revision, files_metadata=True), whose
              siblings carry each file's size (an LFS/Xet file's in lfs.size). Gated repos list
              their files to anyone; a private one needs a token.

$OPENROUTER_API_BASE and $HF_ENDPOINT point the lookups elsewhere (a mirror, a loopback server
in tests); the Hub client sends $HF_TOKEN (or the token `hf auth login` saved), which never
appears in a message."""

from __future__ import annotations

import datetime as dt
import functools
import os
import posixpath
import re
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from evals import hub
from evals.errors import MetadataError
from evals.providers import is_openrouter

OPENROUTER_API = "https://openrouter.ai/api/v1"
HF_ENDPOINT = hub.DEFAULT_ENDPOINT
TIMEOUT = httpx.Timeout(30.0, connect=10.0)
TIMEOUT_SECONDS = 30.0  # the Hub client's, for one request
USER_AGENT = "roblox-evals (model metadata lookup)"

# OpenRouter vendor slug -> the display name the leaderboard uses.
VENDORS = {
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "google": "Google",
    "meta-llama": "Meta",
    "qwen": "Qwen",
    "deepseek": "DeepSeek",
    "mistralai": "Mistral",
    "x-ai": "xAI",
    "moonshotai": "Moonshot AI",
    "z-ai": "Z.ai",
    "microsoft": "Microsoft",
    "nvidia": "NVIDIA",
    "cohere": "Cohere",
    "amazon": "Amazon",
    "minimax": "MiniMax",
    "baidu": "Baidu",
    "tencent": "Tencent",
    "bytedance": "ByteDance",
    "ai21": "AI21",
    "perplexity": "Perplexity",
    "nousresearch": "Nous Research",
    "ibm-granite": "IBM",
    "arcee-ai": "Arcee AI",
    "allenai": "Ai2",
    "inception": "Inception",
    "liquid": "Liquid",
    "stepfun-ai": "StepFun",
    "openrouter": "OpenRouter",
}
# Providers whose bare model names are OpenRouter ids once the vendor is put in front.
VENDOR_PREFIXED = ("openai", "anthropic")

WEIGHT_SUFFIXES = (".safetensors", ".gguf", ".bin", ".pt", ".pth")
# Files with a weight suffix that are not weights: trainer state saved next to a checkpoint.
NOT_WEIGHTS = re.compile(
    r"(?:^|/)(?:training_args\.bin|optimizer[^/]*\.(?:pt|bin)|scheduler[^/]*\.pt"
    r"|scaler\.pt|rng_state[^/]*\.pth|trainer_state[^/]*)$"
)
SPLIT_GGUF = re.compile(r"^(?P<stem>.+)-(?P<part>\d{5})-of-(?P<total>\d{5})\.gguf$")
DATE_SUFFIX = re.compile(r"-(?:20\d{6}|20\d\d-\d\d-\d\d)$")
# First path segments of huggingface.co pages that are not model repositories.
NOT_MODEL_PAGES = frozenset(
    {
        "datasets",
        "spaces",
        "collections",
        "papers",
        "docs",
        "blog",
        "models",
        "organizations",
        "settings",
        "api",
        "login",
        "join",
        "pricing",
        "tasks",
        "learn",
        "posts",
        "chat",
        "search",
    }
)
HF_HOSTS = frozenset({"huggingface.co", "www.huggingface.co", "hf.co"})
LINK_SHAPES = (
    "https://huggingface.co/ORG/REPO (the whole repo), .../blob/REV/FILE or .../resolve/REV/FILE "
    "(one file, or part 1 of a split GGUF) or .../tree/REV/FOLDER"
)


# --- OpenRouter ------------------------------------------------------------------------------


def lookup(
    config: dict[str, Any], url: str | None = None, *, client: httpx.Client | None = None
) -> dict[str, Any]:
    """What can be looked up for a run `config` (keys provider, model, baseUrl), in models.json
    terms (provider, url, releaseDate, price, size): OpenRouter's entry for the model (live runs
    on openrouter.ai use the model id as is; openai / anthropic runs use "<vendor>/<model>"),
    and the size of the weights behind `url` when it is a Hugging Face model link (that size
    replaces OpenRouter's). Anything else (a local server, the reference provider) finds
    nothing: {}. Raises MetadataError when a server cannot be reached or the link is bad."""
    weights_link = url if url and _is_model_link(url) else None
    found: dict[str, Any] = {}
    with _client(client) as http:
        model_id = openrouter_id(config)
        if model_id:
            found = lookup_openrouter(model_id, client=http, sizes=weights_link is None)
        if weights_link:
            found["size"] = weights_size(weights_link)
    return found


def openrouter_id(config: dict[str, Any]) -> str | None:
    """The OpenRouter id a run's model goes by, or None when the run is not one OpenRouter knows."""
    provider, model = config.get("provider"), config.get("model")
    if not isinstance(model, str) or not model.strip():
        return None
    model = model.strip()
    if provider in VENDOR_PREFIXED:
        return model if model.lower().startswith(f"{provider}/") else f"{provider}/{model}"
    if provider == "live" and _is_openrouter(config.get("baseUrl")):
        return model
    return None


def lookup_openrouter(
    model_id: str,
    *,
    base_url: str = OPENROUTER_API,
    client: httpx.Client | None = None,
    sizes: bool = True,
) -> dict[str, Any]:
    """OpenRouter's facts about `model_id` in models.json terms: provider (display vendor), url
    (its openrouter.ai page), releaseDate (from `created`, UTC), price (USD per million tokens)
    and, when `sizes` and the model names a `hugging_face_id` whose weights the Hub sizes,
    size in bytes. The id matches exactly, else case-insensitively, else without a ":free" /
    ":beta" style suffix, else with "." and "-" alike and no date suffix ("claude-sonnet-4-5"
    finds "claude-sonnet-4.5"). A model OpenRouter does not list gives {}. $OPENROUTER_API_BASE
    overrides the default base URL."""
    base = _openrouter_base(base_url)
    with _client(client) as http:
        listing = _get_json(
            http,
            f"{base}/models",
            what="the OpenRouter model list",
            fix="check the network, or set OPENROUTER_API_BASE",
        )
        data = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(data, list):
            raise MetadataError(
                f'{base}/models did not answer OpenRouter\'s model list ({{"data": [...]}}); '
                "check OPENROUTER_API_BASE"
            )
        model = find_model(data, model_id)
        if model is None:
            return {}
        found = describe(model)
        hf_id = model.get("hugging_face_id")
        if sizes and isinstance(hf_id, str) and hf_id.strip().count("/") == 1:
            try:
                found["size"] = weights_size(f"{HF_ENDPOINT}/{hf_id.strip()}")
            except MetadataError:
                pass  # the size is a bonus here: gated, renamed or GGUF-only repos leave it to the user
    return found


def find_model(models: list[Any], model_id: str) -> dict[str, Any] | None:
    """The entry of OpenRouter's `data` list that `model_id` names, by the tiers `lookup_openrouter` lists;
    within a tier the id without a ":variant" suffix, then the shortest, wins."""
    entries = [
        m for m in models if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"]
    ]
    wanted = model_id.strip()
    tiers = (
        lambda i: i == wanted,
        lambda i: i.casefold() == wanted.casefold(),
        lambda i: _base_id(i) == _base_id(wanted),
        lambda i: _loose_id(i) == _loose_id(wanted),
    )
    for matches in tiers:
        hits = [m for m in entries if matches(m["id"])]
        if hits:
            return min(hits, key=lambda m: (":" in m["id"], len(m["id"]), m["id"]))
    return None


def describe(model: dict[str, Any]) -> dict[str, Any]:
    """One OpenRouter model entry in models.json terms; fields it lacks (or prices it marks
    as variable with -1) are left out."""
    model_id = model["id"]
    found: dict[str, Any] = {}
    vendor = display_vendor(model_id, model.get("name"))
    if vendor:
        found["provider"] = vendor
    found["url"] = f"https://openrouter.ai/{model_id.split(':', 1)[0]}"
    released = release_date(model.get("created"))
    if released:
        found["releaseDate"] = released
    pricing = model.get("pricing")
    if isinstance(pricing, dict):
        price_in, price_out = (
            per_million(pricing.get("prompt")),
            per_million(pricing.get("completion")),
        )
        if price_in is not None and price_out is not None:
            found["price"] = {"input": price_in, "output": price_out}
    return found


def display_vendor(model_id: str, name: Any = None) -> str | None:
    """'OpenAI' for 'openai/...'; for a vendor slug not in VENDORS, the prefix of the name
    ('TheDrummer' from 'TheDrummer: Rocinante 12B'), else the slug itself."""
    slug = model_id.split("/", 1)[0].strip() if "/" in model_id else ""
    if slug.lower() in VENDORS:
        return VENDORS[slug.lower()]
    if isinstance(name, str) and ": " in name and name.split(": ", 1)[0].strip():
        return name.split(": ", 1)[0].strip()
    return slug or None


def release_date(created: Any) -> str | None:
    """YYYY-MM-DD (UTC) of a unix timestamp in seconds; None when there is none."""
    if isinstance(created, bool) or not isinstance(created, (int, float, str)):
        return None
    try:
        seconds = float(created)
        if not seconds > 0:
            return None
        return dt.datetime.fromtimestamp(seconds, dt.UTC).date().isoformat()
    except (ValueError, OverflowError, OSError):
        return None


def per_million(per_token: Any) -> int | float | None:
    """USD per token (OpenRouter's decimal string) -> USD per million tokens, exact in decimal
    and rounded to 6 significant digits: "0.00000125" -> 1.25, "0.00001" -> 10,
    "0.000000333333333" -> 0.333333. Negative (variable) or unreadable prices give None."""
    if per_token is None or isinstance(per_token, bool):
        return None
    try:
        value = Decimal(str(per_token).strip())
    except InvalidOperation:
        return None
    if not value.is_finite() or value < 0:
        return None
    rounded = float(format(value * 1_000_000, ".6g"))
    return int(rounded) if rounded.is_integer() else rounded


def _openrouter_base(base_url: str) -> str:
    if base_url == OPENROUTER_API:
        base_url = os.environ.get("OPENROUTER_API_BASE") or OPENROUTER_API
    return base_url.rstrip("/")


def _is_openrouter(base_url: Any) -> bool:
    """OpenRouter by host name (the providers' rule), or the stand-in OPENROUTER_API_BASE names."""
    return is_openrouter(base_url) or (
        isinstance(base_url, str)
        and base_url.strip().rstrip("/") == _openrouter_base(OPENROUTER_API)
    )


def _base_id(model_id: str) -> str:
    return model_id.split(":", 1)[0].casefold()


def _loose_id(model_id: str) -> str:
    return DATE_SUFFIX.sub("", _base_id(model_id).replace(".", "-"))


# --- Hugging Face ----------------------------------------------------------------------------


@dataclass(frozen=True)
class HubLink:
    """A Hugging Face model link, taken apart. kind: "file", "folder" or "repo"."""

    link: str
    repo: str
    kind: str
    revision: str = "main"
    path: str = ""


def weights_size(link: str, *, endpoint: str = HF_ENDPOINT) -> int:
    """Bytes of the weights behind a Hugging Face link: one file (/blob/ or /resolve/), every part
    of a split GGUF (a link to any part, "-00001-of-00003.gguf"), the weight files of a folder
    (/tree/REV/DIR, recursively), or a whole repo. In a folder or repo one format counts:
    .safetensors, else .gguf, else .bin, else .pt / .pth (a repo with several GGUF
    quantizations is an error: link the one that ran); trainer state (optimizer.pt,
    training_args.bin ...) never counts, and a repo's top-level weights win over its
    subfolders'. The sizes are the Hub's file list at the link's revision, one request through
    huggingface_hub (`HfApi.model_info(files_metadata=True)`). $HF_ENDPOINT overrides the
    endpoint; huggingface.co links are read from it."""
    base = _hf_base(endpoint)
    ref = parse_hf_link(link, base)
    files = _repo_files(ref, base)
    if ref.kind == "file":
        if SPLIT_GGUF.match(posixpath.basename(ref.path)):
            return _split_gguf_size(files, ref)
        if ref.path not in files:
            raise MetadataError(
                f"{ref.link}: {_where(ref)} not found; expected a file in a model repo"
            )
        return _size_of(files, ref.path, ref)
    if ref.kind == "folder":
        inside = [p for p in files if p.startswith(ref.path + "/")]
        if not inside:
            raise MetadataError(
                f"{ref.link}: {_where(ref)} not found; expected a folder in a model repo"
            )
        chosen = _pick_weights(inside, ref, whole_repo=False)
        if not chosen:
            raise MetadataError(
                f"{ref.link}: no weight files ({', '.join(WEIGHT_SUFFIXES)}) in folder {ref.path}; "
                f"expected a folder that holds the weights"
            )
        return sum(_size_of(files, p, ref) for p in chosen)
    chosen = _pick_weights(list(files), ref, whole_repo=True)
    if not chosen:
        raise MetadataError(
            f"{ref.link}: no weight files ({', '.join(WEIGHT_SUFFIXES)}) in {ref.repo} at "
            f"{ref.revision}; expected a repo that holds the weights, or link the file"
        )
    return sum(_size_of(files, p, ref) for p in chosen)


def parse_hf_link(link: str, endpoint: str = HF_ENDPOINT) -> HubLink:
    """Take a Hugging Face model link apart; anything else is a MetadataError naming the link
    and the shapes expected. Links to huggingface.co, hf.co or `endpoint` are accepted."""
    text = " ".join((link or "").split())  # messages quote the link: keep them one line
    expected = f"expected {LINK_SHAPES}"
    if not text:
        raise MetadataError(f"no Hugging Face link given; {expected}")
    parts = urlsplit(text if "://" in text else f"https://{text}")
    base = urlsplit(endpoint)
    host = (parts.netloc or "").lower()
    if parts.scheme not in ("http", "https") or host not in HF_HOSTS | {base.netloc.lower()}:
        raise MetadataError(f"{link!r} is not a Hugging Face link; {expected}")
    path = parts.path
    prefix = base.path.rstrip("/")
    if host == base.netloc.lower() and prefix and (path == prefix or path.startswith(prefix + "/")):
        path = path[len(prefix) :]  # an endpoint served under a path prefix
    segments = [unquote(s) for s in path.split("/") if s]
    if len(segments) < 2 or segments[0].lower() in NOT_MODEL_PAGES:
        raise MetadataError(f"{link!r} is not a link to a model repo's weights; {expected}")
    repo, rest = "/".join(segments[:2]), segments[2:]
    link = text
    if not rest:
        return HubLink(link, repo, "repo")
    kind, tail = rest[0], rest[1:]
    if kind in ("blob", "resolve") and len(tail) >= 2:
        return HubLink(link, repo, "file", tail[0], "/".join(tail[1:]))
    if kind == "tree" and len(tail) == 1:
        return HubLink(link, repo, "repo", tail[0])
    if kind == "tree" and len(tail) > 1:
        return HubLink(link, repo, "folder", tail[0], "/".join(tail[1:]))
    raise MetadataError(f"{link!r} is not a link to a model repo's weights; {expected}")


def _is_model_link(url: str) -> bool:
    """Whether `url` is meant as a Hugging Face model link (a Space or a dataset page is not)."""
    text = url.strip()
    parts = urlsplit(text if "://" in text else f"https://{text}")
    hosts = HF_HOSTS | {urlsplit(_hf_base(HF_ENDPOINT)).netloc.lower()}
    segments = [s for s in parts.path.split("/") if s]
    return (parts.netloc or "").lower() in hosts and not (
        segments and segments[0].lower() in NOT_MODEL_PAGES
    )


def _hf_base(endpoint: str) -> str:
    return hub.endpoint() if endpoint == HF_ENDPOINT else endpoint.rstrip("/")


def _repo_files(ref: HubLink, base: str) -> dict[str, int | None]:
    """Every file of the repo at the link's revision and its size (an LFS/Xet file's real size,
    not its pointer's), from the Hub's model info with files metadata."""
    library = hub.library()
    try:
        info = library.HfApi(endpoint=base, library_name="roblox-evals").model_info(
            ref.repo, revision=ref.revision, files_metadata=True, timeout=TIMEOUT_SECONDS
        )
    except (KeyError, TypeError, AttributeError):
        raise MetadataError(
            f"{ref.link}: the model info {base} sent for {ref.repo} is not the Hub's; "
            "check HF_ENDPOINT"
        ) from None
    except Exception as error:
        message = hub.problem(error, kind="model", repo=ref.repo, revision=ref.revision, base=base)
        if message is None:
            raise
        raise MetadataError(f"{ref.link}: {message}") from None
    return {s.rfilename: (s.lfs.size if s.lfs is not None else s.size) for s in info.siblings or []}


def _where(ref: HubLink) -> str:
    return (
        f"{ref.repo}"
        + (f" at {ref.revision}" if ref.revision != "main" else "")
        + (f": {ref.path}" if ref.path else "")
    )


def _size_of(files: dict[str, int | None], path: str, ref: HubLink) -> int:
    size = files[path]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise MetadataError(f"{ref.link}: the Hub gave no size for {path!r}; check HF_ENDPOINT")
    return size


def _split_gguf_size(files: dict[str, int | None], ref: HubLink) -> int:
    match = SPLIT_GGUF.match(posixpath.basename(ref.path))
    assert match
    folder = posixpath.dirname(ref.path)
    total = int(match["total"])
    parts: dict[int, int] = {}
    for path in files:
        other = SPLIT_GGUF.match(posixpath.basename(path))
        if (
            posixpath.dirname(path) == folder
            and other
            and other["stem"] == match["stem"]
            and int(other["total"]) == total
        ):
            parts[int(other["part"])] = _size_of(files, path, ref)
    missing = [f"{n:05d}" for n in range(1, total + 1) if n not in parts]
    if missing:
        raise MetadataError(
            f"{ref.link}: split GGUF part(s) {', '.join(missing)} of {total:05d} not found "
            f"in {folder or 'the repo root'} at {ref.revision}; expected all {total} parts side by side"
        )
    return sum(parts.values())


def _pick_weights(files: list[str], ref: HubLink, *, whole_repo: bool) -> list[str]:
    """The files that are the model: weight suffixes only, trainer state dropped, one format."""
    weights = [
        p
        for p in files
        if p.lower().endswith(WEIGHT_SUFFIXES) and not NOT_WEIGHTS.search(p.lower())
    ]
    if whole_repo:
        weights = [p for p in weights if "/" not in p] or weights
    for suffixes in ((".safetensors",), (".gguf",), (".bin",), (".pt", ".pth")):
        chosen = [p for p in weights if p.lower().endswith(suffixes)]
        if not chosen:
            continue
        if suffixes == (".safetensors",):
            # Mistral-style repos ship the same weights twice: consolidated.safetensors and shards.
            rest = [
                p for p in chosen if not posixpath.basename(p).lower().startswith("consolidated")
            ]
            chosen = rest or chosen
        if suffixes == (".gguf",) and whole_repo:
            models = sorted({_gguf_model(p) for p in chosen if not _is_projector(p)})
            if len(models) > 1:
                shown = ", ".join(models[:3]) + (
                    f" and {len(models) - 3} more" if len(models) > 3 else ""
                )
                raise MetadataError(
                    f"{ref.link}: {ref.repo} holds {len(models)} GGUF models ({shown}); "
                    "expected a link to the file (or part 1 of the split file) that ran"
                )
            chosen = [p for p in chosen if not _is_projector(p)] or chosen
        return chosen
    return []


def _gguf_model(path: str) -> str:
    match = SPLIT_GGUF.match(path)
    return f"{match['stem']}.gguf" if match else path


def _is_projector(path: str) -> bool:
    return posixpath.basename(path).lower().startswith("mmproj")


# --- HTTP ------------------------------------------------------------------------------------


@contextmanager
def _client(client: httpx.Client | None) -> Iterator[httpx.Client]:
    if client is not None:
        yield client
        return
    with httpx.Client(
        timeout=TIMEOUT, follow_redirects=False, headers={"User-Agent": USER_AGENT}, verify=_tls()
    ) as own:
        yield own


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context (certifi, or $SSL_CERT_FILE), built once: building it costs ~80 ms."""
    return httpx.create_ssl_context()


def _get_json(http: httpx.Client, url: str, *, what: str, fix: str) -> Any:
    try:
        response = http.get(url, headers={"Accept": "application/json"}, follow_redirects=True)
    except httpx.HTTPError as error:
        raise MetadataError(
            f"could not fetch {what} from {_origin(url)} ({_describe(error)}); {fix}"
        ) from None
    if response.status_code != 200:
        raise MetadataError(
            f"fetching {what} from {url} failed: HTTP {response.status_code}; {fix}"
        )
    return _json(response, f"{what} from {url}")


def _json(response: httpx.Response, what: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise MetadataError(
            f"{what} is not JSON (HTTP {response.status_code}); check the server address"
        ) from None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _describe(error: httpx.HTTPError) -> str:
    detail = " ".join(str(error).split())
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__
