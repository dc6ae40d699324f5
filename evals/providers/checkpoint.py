"""What a local checkpoint run is, read from its files without torch: the run identity of
`--provider local`.

A run is what determines its output, not where the files lie: the content hash of the
checkpoint folder and of the adapter folder, the dtype the weights are loaded in, the chat
template and the generation settings. Moving a folder keeps the run; changing one byte of a
weight file makes another. Hashing a large checkpoint takes minutes, so each file's hash is
remembered (`hashes.json` in the harness's cache folder) by its path, size and modification
time, and a checkpoint is read once."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from evals import bounded
from evals.atomic import write_json_atomic
from evals.errors import UsageError

from ._base import ProviderSpec

DTYPES = ("auto", "float32", "bfloat16", "float16")
DEFAULT_MAX_NEW_TOKENS = 2048
CHUNK = 1 << 20


def recorded(spec: ProviderSpec) -> dict[str, Any]:
    """The config keys a local run records (see `ProviderSpec.recorded`)."""
    model = checkpoint_folder(spec.model)
    adapter = adapter_folder(spec.adapter) if spec.adapter else None
    return {
        "model": folder_hash(model),
        "adapter": folder_hash(adapter) if adapter else None,
        "dtype": resolved_dtype(model, spec.dtype),
        "chatTemplate": "sha256:" + hashlib.sha256(chat_template(model).encode()).hexdigest(),
        "decoding": "greedy",
        "maxNewTokens": spec.max_tokens or DEFAULT_MAX_NEW_TOKENS,
    }


def checkpoint_folder(value: str) -> Path:
    """--model DIR, checked: a folder holding a Hugging Face checkpoint (its config.json)."""
    path = Path(value).expanduser()
    if not path.is_dir():
        raise UsageError(
            f"--model {value}: no such folder; with --provider local, --model is a Hugging Face checkpoint folder "
            "(config.json, weights, tokenizer), written --model=DIR"
        )
    if not (path / "config.json").is_file():
        raise UsageError(
            f"--model {value}: not a checkpoint folder (no config.json); pass the folder save_pretrained wrote"
        )
    return path.resolve()


def adapter_folder(value: str) -> Path:
    """--adapter DIR, checked: a PEFT adapter folder (its adapter_config.json)."""
    path = Path(value).expanduser()
    if not path.is_dir():
        raise UsageError(
            f"--adapter {value}: no such folder; pass the folder a PEFT adapter was saved to, written --adapter=DIR"
        )
    if not (path / "adapter_config.json").is_file():
        raise UsageError(
            f"--adapter {value}: not a PEFT adapter folder (no adapter_config.json); pass the "
            "folder save_pretrained wrote"
        )
    return path.resolve()


def resolved_dtype(model: Path, dtype: str | None) -> str:
    """--dtype, with auto (or none given) read as the checkpoint's own dtype, float32 when it names none."""
    dtype = dtype or "auto"
    if dtype not in DTYPES:
        raise UsageError(f"--dtype {dtype!r} is unknown; choose one of {', '.join(DTYPES)}")
    if dtype != "auto":
        return dtype
    config = _json(model / "config.json")
    named = config.get("dtype") or config.get("torch_dtype") or "float32"
    return named if named in DTYPES else "float32"


def chat_template(model: Path) -> str:
    """The checkpoint's chat template (`chat_template.jinja`, or tokenizer_config.json's
    `chat_template`, the default one when it holds several): prompts are rendered with it."""
    if (model / "chat_template.jinja").is_file():
        return (model / "chat_template.jinja").read_text(encoding="utf-8")
    template = (
        _json(model / "tokenizer_config.json").get("chat_template")
        if (model / "tokenizer_config.json").is_file()
        else None
    )
    if isinstance(template, list):  # [{"name": "default", "template": ...}, ...]
        template = next(
            (
                t.get("template")
                for t in template
                if isinstance(t, dict) and t.get("name") == "default"
            ),
            None,
        )
    if not isinstance(template, str) or not template:
        raise UsageError(
            f"--model {model}: the checkpoint has no chat template (chat_template.jinja or tokenizer_config.json's "
            "chat_template); prompts go through it: add one to the folder"
        )
    return template


def folder_hash(folder: Path) -> str:
    """sha256 over every file's path inside the folder and content hash; hidden files and
    folders (.git, a hub's .cache) are not part of a checkpoint."""
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    hashes = file_hashes(files)
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(folder).as_posix()}\0{hashes[path]}\n".encode())
    return "sha256:" + digest.hexdigest()


def cache_home() -> Path:
    """The harness's cache folder: ~/.cache/roblox-evals, or $ROBLOX_EVALS_CACHE."""
    return Path(os.environ.get("ROBLOX_EVALS_CACHE") or Path.home() / ".cache" / "roblox-evals")


def file_hashes(files: list[Path]) -> dict[Path, str]:
    """Each file's sha256, remembered in the cache folder by path, size and mtime_ns: a
    file is read again only when one of them changed."""
    store = cache_home() / "hashes.json"
    store.parent.mkdir(parents=True, exist_ok=True)
    from filelock import (
        FileLock,
    )  # here: registering the local provider imports this module in every process

    with FileLock(store.with_name(".hashes.json.lock")):
        try:
            known = bounded.load_json(store)
            known = known if isinstance(known, dict) else {}
        except (FileNotFoundError, ValueError):
            known = {}
        found, changed = {}, False
        for path in files:
            stat = path.stat()
            key = str(path.resolve())
            entry = known.get(key)
            if not (
                isinstance(entry, dict)
                and entry.get("size") == stat.st_size
                and entry.get("mtimeNs") == stat.st_mtime_ns
                and isinstance(entry.get("sha256"), str)
            ):
                entry = known[key] = {
                    "size": stat.st_size,
                    "mtimeNs": stat.st_mtime_ns,
                    "sha256": _sha256(path),
                }
                changed = True
            found[path] = entry["sha256"]
        if changed:
            write_json_atomic(store, known)
    return found


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _json(path: Path) -> dict[str, Any]:
    try:
        value = bounded.load_json(path)
    except (OSError, ValueError) as error:
        raise UsageError(
            f"{path}: cannot be read as JSON ({error}); the checkpoint folder is damaged"
        ) from None
    return value if isinstance(value, dict) else {}
