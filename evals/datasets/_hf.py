"""Published datasets from the Hugging Face Hub, at a pinned revision, downloaded once.

Files are cached under ~/.cache/roblox-evals/hf (or $ROBLOX_EVALS_CACHE) keyed by repo,
revision and path, so a cached dataset never touches the network again. $HF_ENDPOINT points
the download elsewhere (a mirror, or a loopback server in tests)."""

from __future__ import annotations

import os
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


def cache_root() -> Path:
    return Path(os.environ.get("ROBLOX_EVALS_CACHE") or Path.home() / ".cache" / "roblox-evals") / "hf"


def fetch(file: HubFile) -> Path:
    target = cache_root() / file.repo / file.revision / file.path
    if target.is_file():
        return target
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    url = f"{endpoint}/datasets/{file.repo}/resolve/{file.revision}/{file.path}"
    headers = {"Authorization": f"Bearer {token}"} if (token := os.environ.get("HF_TOKEN")) else {}
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
    return target
