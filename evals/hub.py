"""The Hugging Face Hub, through its own client library `huggingface_hub`, which keeps the
conventions a user of the Hub already has: the shared cache ($HF_HOME/hub, or $HF_HUB_CACHE),
$HF_TOKEN or the token `hf auth login` saved, $HF_HUB_OFFLINE, $HF_ENDPOINT.

The library is imported here, and only when a Hub dataset is loaded or a weights size looked up
(`library()`): a run that does neither never pays for it. `problem` turns what it raises into one
line naming the cause and the fix, for `DatasetError` and `MetadataError` alike; no token ever
appears in one."""

from __future__ import annotations

import logging
import os
from typing import Any

from evals import urls
from evals.scrub import redact

DEFAULT_ENDPOINT = "https://huggingface.co"


def library() -> Any:
    """The `huggingface_hub` module, imported at first use."""
    import huggingface_hub

    _redact_its_log(logging.getLogger("huggingface_hub"))
    return huggingface_hub


class _EndpointCredentials(logging.Filter):
    """The client logs the URLs it retries, $HF_ENDPOINT's credentials in them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if secrets := urls.credentials_in(os.environ.get("HF_ENDPOINT")):
            record.msg, record.args = redact(record.getMessage(), secrets), ()
        return True


def _redact_its_log(logger: logging.Logger) -> None:
    """Its warnings (a retry, a slow download) on stderr as before, through its own handler,
    which redacts them: a logger's filter would miss its modules' loggers, and the root's
    handlers are pytest's or none. The library adds that handler when its logging module is
    first imported, which it does lazily: imported here first, so a warning is printed once,
    not once more by a handler of ours beside it."""
    import huggingface_hub.utils.logging  # noqa: F401 (adds the library's handler)

    if not logger.handlers:
        logger.addHandler(logging.StreamHandler())
    for handler in logger.handlers:
        if not any(isinstance(f, _EndpointCredentials) for f in handler.filters):
            handler.addFilter(_EndpointCredentials())
    logger.propagate = False


def endpoint() -> str:
    """$HF_ENDPOINT (a mirror, a loopback server in tests), else the Hub, read at each call."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def cache_folder() -> str:
    """Where the Hub cache is: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    return library().constants.HF_HUB_CACHE


def offline() -> bool:
    return bool(library().constants.is_offline_mode())


def problem(
    error: BaseException,
    *,
    kind: str,
    repo: str,
    revision: str,
    path: str = "",
    instead: str = "",
    base: str | None = None,
) -> str | None:
    """One line "cause; fix" for an error the Hub client raised while reading `path` of the `kind`
    ("model" or "dataset") repo `repo` at `revision` from `base` (default: `endpoint()`), or
    None when `error` is not one of its. `instead` ends the fix with what else the user can do
    ("or pass a local copy to --dataset")."""
    hub = library()
    base = urls.shown(base or endpoint())  # $HF_ENDPOINT may carry credentials: never in a message
    errors, http = hub.errors, _httpx2()
    where = f"{repo}@{revision}" + (f": {path}" if path else "")
    label = _label(error)
    token = _has_token(hub)
    alternative = f", {instead}" if instead else ""
    if isinstance(error, errors.HFValidationError):
        return f"{repo!r} is not a {kind} repo id the Hub accepts; expected ORG/NAME{alternative}"
    if isinstance(error, errors.GatedRepoError):
        if token:
            return (
                f"{kind} repo {repo} is gated and the token in use (HF_TOKEN or `hf auth login`) has no access "
                f"({label}); accept the repo's terms on its Hub page, or use a token that has{alternative}"
            )
        return (
            f"{kind} repo {repo} is gated ({label}); accept its terms on its Hub page, then set HF_TOKEN "
            f"or run `hf auth login`{alternative}"
        )
    if isinstance(error, errors.RepositoryNotFoundError):
        hint = (
            "check the name, or that the token in use (HF_TOKEN or `hf auth login`) can see it"
            if token
            else "check the name; if the repo is private, set HF_TOKEN or run `hf auth login`"
        )
        return f"no {kind} repo {repo} on the Hub at {base} ({label}); {hint}{alternative}"
    if isinstance(error, errors.RevisionNotFoundError):
        return (
            f"{kind} repo {repo} has no revision {revision!r} ({label}); name a branch, tag or commit "
            f"that exists{alternative}"
        )
    if isinstance(error, errors.RemoteEntryNotFoundError):
        return f"{kind} repo {repo} has no file {path!r} at {revision} ({label}); check the file name{alternative}"
    cause = error.__cause__
    if offline() and isinstance(error, errors.LocalEntryNotFoundError):
        return (
            f"HF_HUB_OFFLINE is set and {where} is not in the Hub cache ({cache_folder()}); unset HF_HUB_OFFLINE "
            f"to download it once{alternative}"
        )
    if isinstance(error, errors.OfflineModeIsEnabled):
        return f"HF_HUB_OFFLINE is set, so the Hub is not asked for {where}; unset HF_HUB_OFFLINE{alternative}"
    if isinstance(cause, errors.FileMetadataError):
        return (
            f"{base} does not answer as the Hub does (no commit or ETag for {where}); check HF_ENDPOINT"
            f"{alternative}"
        )
    if isinstance(error, errors.LocalEntryNotFoundError) and isinstance(
        cause, errors.HfHubHTTPError
    ):
        return (
            f"the Hub at {base} answered {_label(cause)} and {where} is not in the Hub cache ({cache_folder()}); "
            f"try again later, or check HF_ENDPOINT{alternative}"
        )
    if isinstance(error, errors.LocalEntryNotFoundError):
        reason = _describe(_root_cause(cause)) if cause is not None else "no answer"
        return (
            f"could not reach the Hub at {base} ({reason}) and {where} is not in the Hub cache "
            f"({cache_folder()}); check the network, or HF_ENDPOINT{alternative}"
        )
    if isinstance(error, errors.HfHubHTTPError):
        return f"the Hub at {base} answered {label} for {where}; try again later, or check HF_ENDPOINT{alternative}"
    if isinstance(error, http.HTTPError):
        return (
            f"could not reach the Hub at {base} ({_describe(error)}); check the network, or set HF_ENDPOINT"
            f"{alternative}"
        )
    if isinstance(error, OSError):  # the cache folder: not writable, full, not a folder
        return (
            f"could not keep {where} in the Hub cache {cache_folder()} ({_describe(error)}); free space there, "
            f"or point HF_HOME (or HF_HUB_CACHE) at a writable folder{alternative}"
        )
    return None


def _httpx2() -> Any:
    import httpx2  # the HTTP client huggingface_hub is built on

    return httpx2


def _has_token(hub: Any) -> bool:
    try:
        return bool(hub.get_token())
    except Exception:  # an unreadable token file is as good as none, here
        return False


def _label(error: BaseException) -> str:
    """ "HTTP 404 EntryNotFound": the status and the Hub's X-Error-Code, never the server's prose."""
    response = getattr(error, "response", None)
    if response is None:
        return type(error).__name__
    code = response.headers.get("X-Error-Code", "")
    return f"HTTP {response.status_code}" + (f" {code}" if code else "")


def _root_cause(error: BaseException) -> BaseException:
    seen = {id(error)}
    while (cause := error.__cause__ or error.__context__) is not None and id(cause) not in seen:
        seen.add(id(cause))
        error = cause
    return error


def _describe(error: BaseException) -> str:
    detail = " ".join(str(error).split())
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__
