"""Published datasets from the Hugging Face Hub, at a pinned revision, through `huggingface_hub`.

Files live in the Hub's own cache ($HF_HUB_CACHE, else $HF_HOME/hub, else
~/.cache/huggingface/hub), shared with every other tool that uses the Hub: a file already there
is never downloaded again, and with $HF_HUB_OFFLINE=1 it still loads. A revision that is a
commit is used as is; a branch name is resolved to its commit at the first download (the
cache's refs remember it, and it is not asked again), and the run's identity records that
commit. $HF_TOKEN or `hf auth login` authenticate; $HF_ENDPOINT points elsewhere (a mirror, or a
loopback server in tests)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from evals import hub
from evals.errors import DatasetError

COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class HubFile:
    repo: str
    revision: str
    path: str

    def identity(self) -> dict[str, str]:
        return {"name": f"hf:{self.repo}", "revision": self.revision, "file": self.path}


def hub_source_of(identity: dict[str, Any], sources: dict[str, dict[str, HubFile]]) -> str | None:
    """Which of `sources` (name -> its files by split) a run's dataset identity came from: the
    same repository and file, at whatever commit the run recorded (a branch may have moved)."""
    for source, files in sources.items():
        for file in files.values():
            if file.identity()["name"] == identity["name"] and file.path == identity.get("file"):
                return source
    return None


def fetch(file: HubFile) -> tuple[Path, dict[str, str]]:
    """The local copy of `file` and the identity of what it is (repo, commit, path)."""
    library = hub.library()
    local = None
    if not COMMIT.fullmatch(file.revision):  # a branch: the commit it was resolved to, when cached
        cached = library.try_to_load_from_cache(
            file.repo, file.path, revision=file.revision, repo_type="dataset"
        )
        local = cached if isinstance(cached, str) else None
    if local is None:
        try:
            local = library.hf_hub_download(
                file.repo,
                file.path,
                repo_type="dataset",
                revision=file.revision,
                endpoint=hub.endpoint(),
            )
        except Exception as error:
            message = hub.problem(
                error,
                kind="dataset",
                repo=file.repo,
                revision=file.revision,
                path=file.path,
                instead="or pass a local copy to --dataset",
            )
            if message is None:
                raise
            raise DatasetError(f"hf:{file.repo}: {message}") from None
    return Path(local), HubFile(file.repo, _commit_of(Path(local), file), file.path).identity()


def _commit_of(local: Path, file: HubFile) -> str:
    """The commit a cached file belongs to: its snapshot folder's name (snapshots/<commit>/<path>)."""
    snapshot = local.parents[len(PurePosixPath(file.path).parts) - 1]
    if not COMMIT.fullmatch(snapshot.name):
        raise DatasetError(
            f"hf:{file.repo}: {local} is not in a snapshot folder of the Hub cache; "
            "clear that repo from the cache (`hf cache rm`) and load again"
        )
    return snapshot.name
