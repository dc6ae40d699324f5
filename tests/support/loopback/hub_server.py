"""The Hugging Face Hub as `huggingface_hub` asks it, on 127.0.0.1, with a CDN beside it.

Routes (kind is "model" or "dataset"; a dataset's paths start with /datasets, /api/datasets):

  HEAD|GET /[datasets/]{repo}/resolve/{revision}/{path}
      a plain file: 200 with X-Repo-Commit, ETag (its git sha1) and Content-Length, the body on GET;
      an LFS file: 302 to the CDN with X-Repo-Commit, X-Linked-Size, X-Linked-Etag (its sha256)
      and ETag, as the Hub answers for LFS files (not Xet ones: no X-Xet-Hash, so the client
      downloads over plain HTTP from the Location).
  GET /api/{models|datasets}/{repo}[/revision/{revision}][?blobs=True]
      the repo's info: sha and siblings (rfilename; with blobs, size, blobId and lfs).
  GET {cdn}/{sha256}
      an LFS file's body, never with the token (the client drops it off the Hub's origin).

Errors carry the Hub's X-Error-Code: a missing repo (or a private one without the token) is
401 RepoNotFound to an anonymous caller, 404 to an authenticated one; a gated repo's files are
401 GatedRepo without a token and 403 with one that has no access, while its info is public; an
unknown revision is 404 RevisionNotFound, an unknown file 404 EntryNotFound (with X-Repo-Commit).
A renamed repo answers a relative 307 to its new name on every route.

`use_hub` points huggingface_hub at a server and a cache folder the way a user's environment
does: the library reads its variables once, when first imported, so the constants it read are
set as well."""

from __future__ import annotations

import hashlib
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import pytest

from .core import LoopbackServer, Reply, Request

COMMIT = "5f0b02c75b57c5855da9ae460ce51323ea669d8a"


@dataclass(frozen=True)
class RepoFile:
    """A file in a repo: its bytes, or only its size (weights of many GB that nobody downloads)."""

    body: bytes | None = None
    size: int | None = None
    lfs: bool = False

    @property
    def length(self) -> int:
        return len(self.body) if self.body is not None else int(self.size or 0)

    def sha1(self, path: str) -> str:
        return hashlib.sha1(self.body if self.body is not None else path.encode()).hexdigest()

    def sha256(self, path: str) -> str:
        return hashlib.sha256(self.body if self.body is not None else path.encode()).hexdigest()


@dataclass
class HubRepo:
    files: dict[str, RepoFile]
    commit: str = COMMIT
    branches: tuple[str, ...] = ("main",)
    gated: bool = False
    private: bool = False


class HubServer(LoopbackServer):
    """The Hub's routes over `repos` ({(kind, "org/name"): HubRepo}, filled by `add`); `token` is
    the one token with access to private and gated repos; `renamed` maps an old name to the new."""

    def __init__(self, token: str | None = None):
        super().__init__()
        self.token = token
        self.repos: dict[tuple[str, str], HubRepo] = {}
        self.renamed: dict[tuple[str, str], str] = {}
        self.blobs: dict[str, bytes | None] = {}
        self.cdn = LoopbackServer(self._cdn_reply)

    def start(self) -> HubServer:
        self.cdn.start()
        super().start()
        return self

    def stop(self) -> None:
        super().stop()
        self.cdn.stop()

    def add(self, kind: str, repo: str, files: dict[str, RepoFile | bytes], **options) -> HubRepo:
        made = HubRepo(
            {p: f if isinstance(f, RepoFile) else RepoFile(f) for p, f in files.items()}, **options
        )
        self.repos[(kind, repo)] = made
        for path, file in made.files.items():
            if file.lfs:
                self.blobs[file.sha256(path)] = file.body
        return made

    # -- routes ----------------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        segments = [unquote(s) for s in request.path.split("/")[1:]]
        if segments[:1] == ["api"] and len(segments) >= 4 and segments[1] in ("models", "datasets"):
            return self._info(request, segments[1][:-1], "/".join(segments[2:4]), segments[4:])
        kind = "dataset" if segments[:1] == ["datasets"] else "model"
        rest = segments[1:] if kind == "dataset" else segments
        if len(rest) >= 5 and rest[2] == "resolve":
            return self._resolve(request, kind, "/".join(rest[:2]), rest[3], "/".join(rest[4:]))
        return Reply(404, "Not Found", {"X-Error-Code": "EntryNotFound"})

    def _info(self, request: Request, kind: str, repo: str, rest: list[str]) -> Reply:
        if (kind, repo) in self.renamed:
            new = self.renamed[(kind, repo)]
            moved = request.path.replace(quote(repo), new, 1) + (
                f"?{request.query}" if request.query else ""
            )
            return Reply(307, "Temporary Redirect", {"Location": moved})
        if rest and (len(rest) != 2 or rest[0] != "revision"):
            return Reply(404, {"error": "Sorry, we can't find the page you are looking for."})
        found = self._repo(request, kind, repo, files=False)
        if isinstance(found, Reply):
            return found
        revision = rest[1] if rest else "main"
        if revision not in (*found.branches, found.commit):
            return Reply(
                404, {"error": f"Invalid rev id: {revision}"}, {"X-Error-Code": "RevisionNotFound"}
            )
        blobs = request.params.get("blobs", "").lower() == "true"
        return Reply(
            200,
            {
                "_id": hashlib.sha1(repo.encode()).hexdigest()[:24],
                "id": repo,
                "author": repo.split("/")[0],
                "sha": found.commit,
                "lastModified": "2025-07-21T12:00:00.000Z",
                "private": found.private,
                "gated": "manual" if found.gated else False,
                "disabled": False,
                "downloads": 1203,
                "likes": 32,
                "tags": [],
                "siblings": [self._sibling(p, f, blobs) for p, f in found.files.items()],
            },
        )

    @staticmethod
    def _sibling(path: str, file: RepoFile, blobs: bool) -> dict:
        if not blobs:
            return {"rfilename": path}
        sibling: dict = {"rfilename": path, "blobId": file.sha1(path), "size": file.length}
        if file.lfs:
            sibling["lfs"] = {"sha256": file.sha256(path), "size": file.length, "pointerSize": 135}
        return sibling

    def _resolve(self, request: Request, kind: str, repo: str, revision: str, path: str) -> Reply:
        if (kind, repo) in self.renamed:  # a relative redirect to the new name, on the Hub itself
            new = self.renamed[(kind, repo)]
            return Reply(
                307, "Temporary Redirect", {"Location": request.path.replace(quote(repo), new, 1)}
            )
        found = self._repo(request, kind, repo, files=True)
        if isinstance(found, Reply):
            return found
        if revision not in (*found.branches, found.commit):
            return Reply(404, "Invalid rev id", {"X-Error-Code": "RevisionNotFound"})
        file = found.files.get(path)
        common = {"X-Repo-Commit": found.commit, "Accept-Ranges": "bytes"}
        if file is None:
            return Reply(
                404,
                "Entry not found",
                common | {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found"},
            )
        if file.lfs:
            location = f"{self.cdn.url}/{file.sha256(path)}?X-Amz-Expires=3600&X-Amz-Signature=fake"
            return Reply(
                302,
                f"Found. Redirecting to {location}",
                common
                | {
                    "Location": location,
                    "X-Linked-Size": str(file.length),
                    "X-Linked-Etag": f'"{file.sha256(path)}"',
                    "ETag": f'W/"{file.sha1(path)[:20]}"',
                },
            )
        body = file.body if file.body is not None else b"x" * file.length
        return Reply(
            200,
            body,
            common | {"ETag": f'"{file.sha1(path)}"', "Content-Type": "application/octet-stream"},
        )

    def _repo(self, request: Request, kind: str, repo: str, *, files: bool) -> HubRepo | Reply:
        sent = request.headers.get("authorization")
        allowed = self.token is not None and sent == f"Bearer {self.token}"
        found = self.repos.get((kind, repo))
        if found is None or (found.private and not allowed):
            return Reply(
                401 if sent is None else 404,
                {"error": "Repository not found"},
                {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"},
            )
        if found.gated and files and not allowed:
            return Reply(
                401 if sent is None else 403,
                {"error": f"Access to {kind} {repo} is restricted."},
                {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access restricted"},
            )
        return found

    def _cdn_reply(self, request: Request) -> Reply:
        body = self.blobs.get(request.path.strip("/"))
        if body is None:  # unknown, or a file known only by its size: never to be downloaded
            return Reply(404, "NoSuchKey")
        return Reply(200, body, {"Content-Type": "application/octet-stream"})


def use_hub(
    monkeypatch: pytest.MonkeyPatch,
    home: Path,
    endpoint: str,
    *,
    token: str | None = None,
    offline: bool = False,
) -> Path:
    """huggingface_hub as a user with HF_HOME=`home`, HF_ENDPOINT=`endpoint`, HF_TOKEN=`token`
    (no saved login) and HF_HUB_OFFLINE=`offline` has it. Returns the Hub cache folder."""
    from huggingface_hub import constants

    for name in (
        "HF_HUB_CACHE",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "HF_HUB_OFFLINE",
        "TRANSFORMERS_OFFLINE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    if token is not None:
        monkeypatch.setenv("HF_TOKEN", token)
    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = home / "hub"
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    # No user-agent extras: they make the client fetch a registry of coding agents from the endpoint.
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setattr(
        constants,
        "HUGGINGFACE_CO_URL_TEMPLATE",
        endpoint + "/{repo_id}/resolve/{revision}/{filename}",
    )
    return cache


def no_retry_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client retries a failed connection 5 times, 1 s, 2 s, 4 s, 8 s and 8 s apart: no waits in tests."""
    from huggingface_hub.utils import _http

    monkeypatch.setattr(
        _http, "time", type("NoWaits", (), {"sleep": staticmethod(lambda seconds: None)})
    )


def closed_port_url() -> str:
    """The address of a Hub that is down: a loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def one_line(error: pytest.ExceptionInfo) -> str:
    """The error's message, checked to be one line."""
    message = str(error.value)
    assert "\n" not in message and message.strip() == message and message
    return message
