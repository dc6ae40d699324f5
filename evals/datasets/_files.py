"""Reading dataset files (JSONL, JSON, parquet) into records, with errors that name the file
and the record."""

from __future__ import annotations

import codecs
import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Sequence

from evals import bounded
from evals.errors import DatasetError, FileLimitError


Numbered = list[tuple[int, dict[str, Any]]]  # (record number in the file, record)


def read_records(path: Path) -> Numbered:
    """Every record of the file with its number (JSONL: its line), so that an error can name
    the record as the user finds it in the file."""
    if not path.is_file():
        raise DatasetError(
            f"{path}: not a regular file (a folder, a FIFO or a device); pass a .jsonl or "
            ".parquet file to --dataset"
            if path.exists()
            else f"{path}: no such dataset file; pass an existing .jsonl or .parquet file to --dataset"
        )
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _read_parquet(path)
    if suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(path)
    if suffix == ".json":
        data = _load_json(path)
        if not isinstance(data, list):
            raise DatasetError(f"{path}: expected a JSON array of records")
        return [(i + 1, _record(path, i + 1, row)) for i, row in enumerate(data)]
    raise DatasetError(f"{path}: unknown dataset format {suffix!r}; use .jsonl or .parquet")


def file_digest(path: Path) -> str:
    return bytes_digest(dataset_bytes(path))


def bytes_digest(data: bytes) -> str:
    """What a dataset identity records of a file's content (`sha256`): its SHA-256's head."""
    return hashlib.sha256(data).hexdigest()[:12]


def column(
    path: Path,
    line: int,
    record: dict[str, Any],
    names: Sequence[str],
    *,
    kind: type | tuple = str,
    required: bool = True,
) -> Any:
    """The first of `names` present in `record`, type-checked; a missing one fails loudly."""
    for name in names:
        if record.get(name) is not None:
            value = record[name]
            if not isinstance(value, kind):
                raise DatasetError(
                    f"{path}: record {line}: column {name!r} should be {_kind_name(kind)}, got {type(value).__name__}"
                )
            return value
    if required:
        raise DatasetError(f"{path}: record {line}: missing column {' / '.join(map(repr, names))}")
    return None


def load_each(
    path: Path, records: Numbered, build: Callable[[int, dict[str, Any]], Any], *, split: str
) -> list[Any]:
    """`build(line, record)` for every record, with an error naming the record on failure;
    then every id checked: not empty, unique, and not sharing its run-folder files with another."""
    if not records:
        raise DatasetError(f"{path}: no {split!r} records in the file; check the file or --split")
    items = []
    for line, record in records:
        try:
            items.append(build(line, record))
        except DatasetError:
            raise
        except (ValueError, TypeError, KeyError, IndexError) as error:
            raise DatasetError(f"{path}: record {line}: {error}") from None
    _check_ids(path, [(line, item.id) for (line, _), item in zip(records, items)])
    return items


def _check_ids(path: Path, ids: list[tuple[int, str]]) -> None:
    """Every id present and unique. (Any id has run-folder files of its own: `evals.names`.)"""
    seen: dict[str, int] = {}
    for line, item_id in ids:
        if not item_id.strip():
            raise DatasetError(f"{path}: record {line}: empty id; give every record a unique id")
        first_line = seen.setdefault(item_id, line)
        if first_line != line:
            raise DatasetError(
                f"{path}: records {first_line} and {line} have the same id {item_id!r}; ids must be unique"
            )


def _read_jsonl(path: Path) -> Numbered:
    records = []
    try:
        numbered = bounded.lines(dataset_bytes(path).removeprefix(codecs.BOM_UTF8))
    except FileLimitError as error:
        raise DatasetError(f"{path}: {error}; split the record or the file") from None
    for number, raw in numbered:
        line = _decode(path, number, raw)
        if not line.strip():
            continue
        try:
            row = bounded.loads(line)
        except json.JSONDecodeError as error:
            raise DatasetError(
                f"{path}: record {number}: not valid JSON ({error.msg} at column {error.colno})"
            ) from None
        except FileLimitError as error:
            raise DatasetError(f"{path}: record {number}: {error}") from None
        records.append((number, _record(path, number, row)))
    return records


def _decode(path: Path, first_line: int, raw: bytes) -> str:
    """`raw` (starting at line `first_line` of the file) as text; bytes that are not UTF-8 are
    one DatasetError naming the line, never a UnicodeDecodeError."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = first_line + raw.count(b"\n", 0, error.start)
        column = error.start - raw.rfind(b"\n", 0, error.start)
        raise DatasetError(
            f"{path}: line {line}: not UTF-8 (byte 0x{raw[error.start]:02x} at column {column}); "
            "save the file as UTF-8 (from Latin-1: iconv -f latin1 -t utf-8)"
        ) from None


def _read_parquet(path: Path) -> Numbered:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        raise DatasetError(f"{path}: reading parquet needs pyarrow; run `uv sync`") from None
    try:
        return list(enumerate(pq.read_table(path).to_pylist(), start=1))
    except Exception as error:  # pyarrow raises several types for a damaged file
        raise DatasetError(f"{path}: not a readable parquet file ({error})") from None


def _load_json(path: Path) -> Any:
    try:
        return bounded.loads(_decode(path, 1, dataset_bytes(path).removeprefix(codecs.BOM_UTF8)))
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    except FileLimitError as error:
        raise DatasetError(f"{path}: {error}") from None


def dataset_bytes(path: Path) -> bytes:
    """The dataset file's bytes, within `bounded.MAX_DATASET_BYTES`; a DatasetError else."""
    try:
        return bounded.read_bytes(path, limit=bounded.MAX_DATASET_BYTES)
    except FileLimitError as error:
        raise DatasetError(f"{path}: {error}; pass a regular .jsonl or .parquet file") from None


def _record(path: Path, line: int, row: Any) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise DatasetError(
            f"{path}: record {line}: expected a JSON object, got {type(row).__name__}"
        )
    return row


def _kind_name(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)
