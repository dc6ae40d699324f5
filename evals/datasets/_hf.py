"""Published datasets from the Hugging Face Hub, at a pinned revision, downloaded once.

Files are cached under ~/.cache/roblox-evals/hf (or $ROBLOX_EVALS_CACHE) keyed by repo,
commit and path, so a cached dataset never touches the network again. A branch name instead
of a commit is resolved to its commit once, at first download, and the run's identity records
that commit. $HF_ENDPOINT points the download elsewhere (a mirror, or a loopback server in
tests)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import httpx

from evals.errors import DatasetError


@dataclass(frozen=True)
class HubFile:
    repo: str
    revision: str
    path: str

    def identity(self) -> dict[str, str]:
        return {"name": f"hf:{self.repo}", "revision": self.revision, "file": self.path}


def cache_home() -> Path:
    """The harness's cache folder: ~/.cache/roblox-evals, or $ROBLOX_EVALS_CACHE."""
    return Path(os.environ.get("ROBLOX_EVALS_CACHE") or Path.home() / ".cache" / "roblox-evals")


def cache_root() -> Path:
    return cache_home() / "hf"


def fetch(file: HubFile) -> tuple[Path, dict[str, str]]:
    """The local copy of `file` and the identity of what it is (repo, commit, path)."""
    file = _pinned(file)
    target = cache_root() / file.repo / file.revision / file.path
    if target.is_file():
        return target, file.identity()
    endpoint = _endpoint()
    url = f"{endpoint}/datasets/{file.repo}/resolve/{file.revision}/{file.path}"
    headers = _auth()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    try:
        with httpx.stream("GET", url, headers=headers, follow_redirects=True, timeout=60) as response:
            if response.status_code != 200:
                raise DatasetError(f"downloading {url} failed: HTTP {response.status_code}; check the network or set HF_ENDPOINT")
            with partial.open("wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
    except httpx.HTTPError as error:
        partial.unlink(missing_ok=True)
        raise DatasetError(f"downloading {url} failed ({error}); check the network or pass a local file to --dataset") from None
    partial.replace(target)
    return target, file.identity()


def _pinned(file: HubFile) -> HubFile:
    """`file` at a commit: a branch is resolved through the Hub API once, then remembered."""
    if re.fullmatch(r"[0-9a-f]{40}", file.revision):
        return file
    ref = cache_root() / file.repo / "refs" / file.revision
    if not ref.is_file():
        url = f"{_endpoint()}/api/datasets/{file.repo}/revision/{file.revision}"
        try:
            response = httpx.get(url, headers=_auth(), follow_redirects=True, timeout=60)
            sha = response.json()["sha"] if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            sha = None
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{40}", sha):
            raise DatasetError(f"could not resolve {file.repo}@{file.revision} to a commit at {url}; check the network or set HF_ENDPOINT")
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(sha)
    return HubFile(file.repo, ref.read_text().strip(), file.path)


def _endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if (token := os.environ.get("HF_TOKEN")) else {}
