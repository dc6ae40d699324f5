"""Model metadata (evals.metadata) without a server: the id variants that find a model in
OpenRouter's list, prices per token to per million without float noise, and the Hugging Face
links a size can be given as. Lookups against loopback servers are tests/e2e/test_metadata.py."""

from __future__ import annotations

import pytest

from evals.metadata import (
    find_model,
    parse_hf_link,
    per_million,
)
from tests.support.hub_repos import CKPT_BIN, MODELS, Q8_PARTS, SHARDS, File

# --- OpenRouter: the model list --------------------------------------------------------------






# --- the Hub: repos, files, answers ----------------------------------------------------------




REPOS: dict[str, dict[str, File]] = {
    "tiny-org/Tiny-Chat-8B": {
        ".gitattributes": File(1_519, False),
        "README.md": File(38_812, False),
        "LICENSE": File(7_627, False),
        "config.json": File(855, False),
        "generation_config.json": File(184, False),
        **{f"model-{i:05d}-of-00004.safetensors": File(size, True) for i, size in enumerate(SHARDS, 1)},
        "model.safetensors.index.json": File(23_950, False),
        "tokenizer.json": File(9_085_657, True),
        "tokenizer_config.json": File(55_351, False),
        "special_tokens_map.json": File(296, False),
        "original/consolidated.00.pth": File(16_060_617_592, True),
        "original/params.json": File(199, False),
        "original/tokenizer.model": File(2_183_982, True),
        # A training checkpoint: two .bin shards among config, tokenizer and trainer state.
        "checkpoints/step-1000/config.json": File(855, False),
        "checkpoints/step-1000/generation_config.json": File(184, False),
        "checkpoints/step-1000/pytorch_model-00001-of-00002.bin": File(CKPT_BIN[0], True),
        "checkpoints/step-1000/pytorch_model-00002-of-00002.bin": File(CKPT_BIN[1], True),
        "checkpoints/step-1000/pytorch_model.bin.index.json": File(23_950, False),
        "checkpoints/step-1000/tokenizer.json": File(9_085_657, True),
        "checkpoints/step-1000/tokenizer_config.json": File(55_351, False),
        "checkpoints/step-1000/special_tokens_map.json": File(296, False),
        "checkpoints/step-1000/training_args.bin": File(5_368, True),
        "checkpoints/step-1000/optimizer.pt": File(27_000_000_000, True),
        "checkpoints/step-1000/scheduler.pt": File(1_064, True),
        "checkpoints/step-1000/rng_state.pth": File(14_244, True),
        "checkpoints/step-1000/trainer_state.json": File(4_096, False),
        "assets/chat_template.jinja": File(4_711, False),
        "assets/logo.png": File(183_204, True),
    },
    "tiny-org/Tiny-Chat-8B-GGUF": {
        ".gitattributes": File(2_049, False),
        "README.md": File(12_730, False),
        "Tiny-Chat-8B-Q4_K_M.gguf": File(4_920_739_232, True),
        "Tiny-Chat-8B-Q6_K.gguf": File(6_596_006_112, True),
        **{f"Q8_0/Tiny-Chat-8B-Q8_0-{i:05d}-of-00003.gguf": File(size, True) for i, size in enumerate(Q8_PARTS, 1)},
        # Part 2 of a split that lost a part: only parts 1 and 2 of 3 are there.
        "BF16/Tiny-Chat-8B-BF16-00001-of-00003.gguf": File(7_000_000_000, True),
        "BF16/Tiny-Chat-8B-BF16-00002-of-00003.gguf": File(7_000_000_000, True),
        "params": File(193, False),
    },
    "solo-org/Solo-3B-GGUF": {
        "README.md": File(4_120, False),
        "solo-3b-q4_k_m.gguf": File(2_019_377_696, True),
        "mmproj-solo-3b-f16.gguf": File(851_251_104, True),
    },
    "gated-org/Locked-70B": {
        "config.json": File(700, False),
        "model.safetensors": File(141_107_412_480, True),
    },
    "private-org/Own-7B": {
        "model.safetensors": File(15_231_233_024, True),
    },
}


# --- OpenRouter lookups ----------------------------------------------------------------------


@pytest.mark.parametrize("asked, found", [
    ("QWEN/Qwen3-235B-A22B-2507", "qwen/qwen3-235b-a22b-2507"),  # case-insensitively
    ("qwen/qwen3-235b-a22b-2507:free", "qwen/qwen3-235b-a22b-2507:free"),  # an exact variant wins
    ("z-ai/glm-4.6:free", "z-ai/glm-4.6"),  # no free variant listed: the model without the suffix
    ("anthropic/claude-3.7-sonnet", "anthropic/claude-3.7-sonnet:beta"),  # only the :beta variant listed
    ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4.5"),  # Anthropic's dashes, OpenRouter's dots
    ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5"),  # a dated snapshot
])
def test_id_variants_find_the_model(asked, found):
    assert find_model(MODELS, asked)["id"] == found


@pytest.mark.parametrize("per_token, expected", [
    ("0.00000125", 1.25),
    ("0.00001", 10),
    ("0.000000078", 0.078),  # 0.000000078 * 1e6 is 0.07800000000000001 in floats
    ("1e-7", 0.1),  # 0.09999999999999999 in floats
    ("0.000000333333333", 0.333333),  # six significant digits
    ("0.0000000713", 0.0713),
    ("0", 0),
    ("-1", None),  # openrouter/auto: variable
    ("", None),
    (None, None),
])
def test_price_per_token_to_per_million_without_float_noise(per_token, expected):
    assert per_million(per_token) == expected
    if expected is not None:
        assert repr(per_million(per_token)) == repr(expected)


# --- Hugging Face: weights sizes -------------------------------------------------------------


def test_link_parsing():
    assert parse_hf_link("huggingface.co/a/b/resolve/refs%2Fpr%2F3/sub/w.gguf").revision == "refs/pr/3"
    ref = parse_hf_link("https://hf.co/a/b/tree/main/Q4_K_M/")
    assert (ref.repo, ref.kind, ref.revision, ref.path) == ("a/b", "folder", "main", "Q4_K_M")
    mirror = parse_hf_link("https://mirror.example/hf/a/b/blob/main/x.safetensors", "https://mirror.example/hf")
    assert (mirror.repo, mirror.kind, mirror.path) == ("a/b", "file", "x.safetensors")


