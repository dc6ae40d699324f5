"""Golden run identities: a fixed identity for each built-in provider gives a fixed run folder
name and fixed config keys, in a fixed order. However the providers declare what they take,
a run folder made by an earlier commit keeps its name."""

from __future__ import annotations

import json

import pytest

from evals.identity import from_values
from evals.plan import plan
from evals.tasks import TASKS


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A checkpoint and an adapter folder of fixed content (what a local run records is their hashes)."""
    monkeypatch.setenv("ROBLOX_EVALS_CACHE", str(tmp_path / "cache"))
    for variable in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    checkpoint, adapter = tmp_path / "checkpoint", tmp_path / "adapter"
    checkpoint.mkdir()
    adapter.mkdir()
    (checkpoint / "config.json").write_text(json.dumps({"dtype": "bfloat16"}))
    (checkpoint / "chat_template.jinja").write_text("{{ messages }}")
    (adapter / "adapter_config.json").write_text("{}")
    return {"checkpoint": str(checkpoint), "adapter": str(adapter)}


IDENTITIES = {
    "openai": {
        "provider": "openai",
        "model": "gpt-5.5",
        "effort": "medium",
        "max_tokens": 1000,
        "base_url": "https://api.example.com/v1/",
    },
    "anthropic": {
        "provider": "anthropic",
        "model": "claude-x",
        "thinking": True,
        "max_tokens": 2000,
    },
    "openrouter": {
        "provider": "live",
        "model": "deepseek/v3",
        "base_url": "https://openrouter.ai/api/v1",
        "route": "deepinfra",
        "effort": "high",
    },
    "vllm": {
        "provider": "live",
        "model": "qwen",
        "base_url": "http://127.0.0.1:8000/v1",
        "thinking": True,
    },
    "reference": {
        "provider": "reference",
        "limit": 3,
        "split": "train",
        "epochs": 2,
        "system_prompt_prefix": "Be brief.",
    },
    "local": {
        "provider": "local",
        "model": "{checkpoint}",
        "adapter": "{adapter}",
        "dtype": "float16",
        "thinking": True,
        "max_tokens": 64,
    },
}

GOLDEN = {  # what commit 905fadf computes for these identities (checked with its code on PYTHONPATH; local: at 211e774)
    ("openai", "freeform"): (
        "openai-gpt-5.5-medium-33e0ac7b27",
        [
            "eval",
            "provider",
            "model",
            "baseUrl",
            "effort",
            "maxTokens",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("anthropic", "freeform"): (
        "anthropic-claude-x-thinking-7516db2b8e",
        [
            "eval",
            "provider",
            "model",
            "thinking",
            "maxTokens",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("openrouter", "freeform"): (
        "live-deepseek-v3-high-deepinfra-2778510402",
        [
            "eval",
            "provider",
            "model",
            "baseUrl",
            "effort",
            "route",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("vllm", "freeform"): (
        "live-qwen-thinking-e54ba68ebe",
        [
            "eval",
            "provider",
            "model",
            "baseUrl",
            "thinking",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("reference", "freeform"): (
        "reference-gold-epochs2-limit3-train-d5f8a65886",
        [
            "eval",
            "provider",
            "model",
            "systemPromptPrefix",
            "epochs",
            "limit",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("local", "freeform"): (
        "local-25d17965c8dd-thinking-adapter-38c14d025a",
        [
            "eval",
            "provider",
            "model",
            "thinking",
            "maxTokens",
            "adapter",
            "dtype",
            "split",
            "chatTemplate",
            "decoding",
            "maxNewTokens",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("openai", "multiple_choice"): (
        "openai-gpt-5.5-medium-bfae62b774",
        [
            "eval",
            "provider",
            "model",
            "baseUrl",
            "effort",
            "maxTokens",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("anthropic", "multiple_choice"): (
        "anthropic-claude-x-thinking-93c28a78bc",
        [
            "eval",
            "provider",
            "model",
            "thinking",
            "maxTokens",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("openrouter", "multiple_choice"): (
        "live-deepseek-v3-high-deepinfra-b90bb9facc",
        [
            "eval",
            "provider",
            "model",
            "baseUrl",
            "effort",
            "route",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("vllm", "multiple_choice"): (
        "live-qwen-thinking-4b6939bab8",
        [
            "eval",
            "provider",
            "model",
            "baseUrl",
            "thinking",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("reference", "multiple_choice"): (
        "reference-gold-epochs2-limit3-train-922dfbb2c8",
        [
            "eval",
            "provider",
            "model",
            "systemPromptPrefix",
            "epochs",
            "limit",
            "split",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("local", "multiple_choice"): (
        "local-25d17965c8dd-thinking-adapter-007e614a49",
        [
            "eval",
            "provider",
            "model",
            "thinking",
            "maxTokens",
            "adapter",
            "dtype",
            "split",
            "chatTemplate",
            "decoding",
            "maxNewTokens",
            "dataset",
            "promptVersion",
            "harnessVersion",
        ],
    ),
    ("openai", "leetcode"): (
        "openai-gpt-5.5-medium-b56fc7d094",
        [
            "eval",
            "provider",
            "model",
            "baseUrl",
            "effort",
            "maxTokens",
            "split",
            "dataset",
            "promptVersion",
            "workBudget",
            "harnessVersion",
        ],
    ),
    ("anthropic", "leetcode"): (
        "anthropic-claude-x-thinking-e5ac4e60e9",
        [
            "eval",
            "provider",
            "model",
            "thinking",
            "maxTokens",
            "split",
            "dataset",
            "promptVersion",
            "workBudget",
            "harnessVersion",
        ],
    ),
    ("openrouter", "leetcode"): (
        "live-deepseek-v3-high-deepinfra-1d26b56779",
        [
            "eval",
            "provider",
            "model",
            "baseUrl",
            "effort",
            "route",
            "split",
            "dataset",
            "promptVersion",
            "workBudget",
            "harnessVersion",
        ],
    ),
    ("vllm", "leetcode"): (
        "live-qwen-thinking-b3e72459e8",
        [
            "eval",
            "provider",
            "model",
            "baseUrl",
            "thinking",
            "split",
            "dataset",
            "promptVersion",
            "workBudget",
            "harnessVersion",
        ],
    ),
    ("reference", "leetcode"): (
        "reference-gold-epochs2-limit3-2efee43332",
        [
            "eval",
            "provider",
            "model",
            "systemPromptPrefix",
            "epochs",
            "limit",
            "split",
            "dataset",
            "promptVersion",
            "workBudget",
            "harnessVersion",
        ],
    ),
    ("local", "leetcode"): (
        "local-25d17965c8dd-thinking-adapter-0fa044214d",
        [
            "eval",
            "provider",
            "model",
            "thinking",
            "maxTokens",
            "adapter",
            "dtype",
            "split",
            "chatTemplate",
            "decoding",
            "maxNewTokens",
            "dataset",
            "promptVersion",
            "workBudget",
            "harnessVersion",
        ],
    ),
}


def identity(name: str, files: dict[str, str]) -> dict:
    return {k: v.format(**files) if isinstance(v, str) else v for k, v in IDENTITIES[name].items()}


@pytest.mark.parametrize("name", IDENTITIES)
@pytest.mark.parametrize("eval_name", ["freeform", "multiple_choice", "leetcode"])
def test_a_fixed_identity_keeps_its_run_name_and_its_config_keys(files, name, eval_name):
    ident = from_values(identity(name, files))
    config = plan(TASKS[eval_name], ident).config
    assert (config.run_name, list(config.to_dict())) == GOLDEN[name, eval_name]
