"""Dataset files in the shapes a user brings them (JSON lines, Parquet, the v2 record), for the datasets' tests."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

MC_RECORDS = [
    {
        "id": "t-1",
        "question": "Which call sends a message from a LocalScript to the server through a RemoteEvent?",
        "choices": ["FireClient", "InvokeServer", "Fire", "FireServer"],
        "answer": "D",
    },
    {
        "id": "t-2",
        "question": 'Which function returns "Instance" for a Part?',
        "choices": ["type", "typeof", "getmetatable", "rawequal"],
        "answer": "B",
    },
    {
        "id": "t-3",
        "question": "Where do server-only ModuleScripts belong?",
        "choices": ["ReplicatedStorage", "ServerStorage", "StarterPlayerScripts", "Workspace"],
        "answer": "B",
    },
]


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_parquet(path: Path, records: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(records), path)
    return path


def v2_record(i: int) -> dict:
    return {
        "question": f"Roblox question number {i}: which service replicates to every client?",
        "answer": f"ReplicatedStorage ({i})",
        "incorrect_0": f"ServerStorage ({i})",
        "incorrect_1": f"ServerScriptService ({i})",
        "incorrect_2": f"StarterPack ({i})",
    }
