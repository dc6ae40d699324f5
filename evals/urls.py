"""Credentials written into an endpoint URL are secrets, as API keys are.

`http://user:PASSWORD@host/v1` (user info) and `https://host/v1?api-key=S` (a query parameter
named like a credential: key, token, secret, password, signature...) still authenticate the
requests, but what the harness keeps and shows of the URL is `without_credentials(url)`:
the run identity, the saved plan, result files, cache records, printed commands. A URL with
credentials is so the same run as the URL without them; a URL without any is kept as given,
byte for byte, so no run folder's name changes.

The URL as given stays in memory only: `without_credentials` puts it in this process's
environment (`VARIABLE`), which the processes the harness starts (evaluate's pytest
processes, the fetcher children) inherit, as they inherit API keys, and `connection` finds it
again by the URL without credentials when a client is built. A resumed `evaluate NAME` has
only the saved URL: the credentials must be given again (`evals.evaluate` says so)."""

from __future__ import annotations

import base64
import json
import os
import re
from dataclasses import dataclass, field
from typing import overload
from urllib.parse import unquote, urlsplit, urlunsplit

VARIABLE = "ROBLOX_EVALS_URL_CREDENTIALS"  # a JSON list of the URLs given with credentials

# A query parameter is a credential by its name, compared without case, "-" or "_":
# api-key, apikey, x-api-key, key, token, access_token, auth, sig, signature, code, password...
_CREDENTIAL_NAME = re.compile(
    r"(.*(key|token|secret|password|passwd|signature|credentials?)|auth|authorization|pwd|pass|sig|code|jwt|session|sessionid)"
)


@dataclass(frozen=True)
class Connection:
    """What a client is built with: the URL without user info or query, the query parameters
    it sends with every request, and the Basic authorization the user info stands for."""

    base_url: str
    query: dict[str, str] = field(default_factory=dict, repr=False)  # never in a traceback
    headers: dict[str, str] = field(default_factory=dict, repr=False)


def is_credential(name: str) -> bool:
    return bool(_CREDENTIAL_NAME.fullmatch(re.sub(r"[-_]", "", unquote(name).lower())))


@overload
def without_credentials(url: str) -> str: ...


@overload
def without_credentials(url: None) -> None: ...


def without_credentials(url: str | None) -> str | None:
    """`url` without its user info and credential query parameters; remembered with them (in
    this process's environment) for `connection`. A URL without any comes back unchanged."""
    if url is None:
        return None
    clean = _strip(url)
    if clean != url:
        _remember(url)
    return clean


def shown(url: str) -> str:
    """`url` as a message may show it: without credentials (and remembering none)."""
    return _strip(url) or url


def connection(url: str | None) -> Connection | None:
    """How to reach `url` (saved without its credentials), with the credentials it was given."""
    if url is None:
        return None
    full = _given().get(url, url)
    parts = _split(full)
    if parts is None:
        return Connection(full)
    userinfo, host = _userinfo(parts.netloc)
    query = dict(pair.partition("=")[::2] for pair in _pairs(parts.query))
    headers = {"Authorization": _basic(userinfo)} if userinfo is not None else {}
    return Connection(
        urlunsplit((parts.scheme, host, parts.path, "", "")),
        {unquote(k): unquote(v) for k, v in query.items()},
        headers,
    )


def secrets(url: str | None) -> tuple[str, ...]:
    """The credentials `url` was given with, as written and decoded (and as a Basic header
    carries them), for `evals.scrub` to redact."""
    return credentials_in(_given().get(url) if url else None)


def credentials_in(full: str | None) -> tuple[str, ...]:
    """The credentials written into the URL `full`, as `secrets` gives them."""
    parts = _split(full)
    if parts is None:
        return ()
    found = []
    userinfo, _ = _userinfo(parts.netloc)
    if userinfo is not None:
        found += [
            userinfo,
            unquote(userinfo),
            *userinfo.split(":", 1),
            *(unquote(p) for p in userinfo.split(":", 1)),
        ]
        found += _basic(userinfo).split()[1:]
    for pair in _pairs(parts.query):
        name, _, value = pair.partition("=")
        if is_credential(name):
            found += [value, unquote(value)]
    return tuple(dict.fromkeys(s for s in found if s))


def given_with_credentials(url: str | None) -> bool:
    """Whether this process knows credentials for `url` (saved without them)."""
    return bool(url) and url in _given()


def _basic(userinfo: str) -> str:
    user, _, password = userinfo.partition(":")
    return "Basic " + base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()


def _split(url: str | None):
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a malformed port raises here, not later in the SDK
    except ValueError:
        return None
    return parts if parts.netloc else None


def _userinfo(netloc: str) -> tuple[str | None, str]:
    userinfo, at, host = netloc.rpartition("@")
    return (userinfo, host) if at else (None, netloc)


def _pairs(query: str) -> list[str]:
    # "&" and the older ";" both separate parameters: a key after either is a credential.
    return [pair for pair in re.split(r"[&;]", query) if pair]


def _given() -> dict[str, str]:
    """URL without credentials -> the URL as given, from this process's environment."""
    return {_strip(url): url for url in _given_urls()}


def _given_urls() -> list[str]:
    try:
        urls = json.loads(os.environ.get(VARIABLE, "[]"))
    except ValueError:
        return []
    return [url for url in urls if isinstance(url, str)] if isinstance(urls, list) else []


def _strip(url: str) -> str:
    parts = _split(url)
    if parts is None:
        return url
    userinfo, host = _userinfo(parts.netloc)
    pairs = _pairs(parts.query)
    kept = [pair for pair in pairs if not is_credential(pair.partition("=")[0])]
    if userinfo is None and len(kept) == len(pairs):
        return url
    return urlunsplit((parts.scheme, host, parts.path, "&".join(kept), parts.fragment))


def given() -> list[str]:
    """The URLs this process was given with credentials, for a process it hands work to."""
    return _given_urls()


def remember(given: list[str]) -> None:
    """Take the URLs `given` returned in another process."""
    for url in given:
        _remember(url)


def _remember(url: str) -> None:
    clean = _strip(url)
    # The last given for an endpoint wins: the same URL with other credentials replaces them.
    os.environ[VARIABLE] = json.dumps([u for u in _given_urls() if _strip(u) != clean] + [url])
