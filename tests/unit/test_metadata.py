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
from tests.support.hub_repos import CKPT_BIN, File, MODELS, Q8_PARTS, REPOS, SHARDS

# --- OpenRouter: the model list --------------------------------------------------------------


# --- the Hub: repos, files, answers ----------------------------------------------------------


# --- OpenRouter lookups ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "asked, found",
    [
        ("QWEN/Qwen3-235B-A22B-2507", "qwen/qwen3-235b-a22b-2507"),  # case-insensitively
        (
            "qwen/qwen3-235b-a22b-2507:free",
            "qwen/qwen3-235b-a22b-2507:free",
        ),  # an exact variant wins
        (
            "z-ai/glm-4.6:free",
            "z-ai/glm-4.6",
        ),  # no free variant listed: the model without the suffix
        (
            "anthropic/claude-3.7-sonnet",
            "anthropic/claude-3.7-sonnet:beta",
        ),  # only the :beta variant listed
        (
            "anthropic/claude-sonnet-4-5",
            "anthropic/claude-sonnet-4.5",
        ),  # Anthropic's dashes, OpenRouter's dots
        ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5"),  # a dated snapshot
    ],
)
def test_id_variants_find_the_model(asked, found):
    assert find_model(MODELS, asked)["id"] == found


@pytest.mark.parametrize(
    "per_token, expected",
    [
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
    ],
)
def test_price_per_token_to_per_million_without_float_noise(per_token, expected):
    assert per_million(per_token) == expected
    if expected is not None:
        assert repr(per_million(per_token)) == repr(expected)


# --- Hugging Face: weights sizes -------------------------------------------------------------


def test_link_parsing():
    assert (
        parse_hf_link("huggingface.co/a/b/resolve/refs%2Fpr%2F3/sub/w.gguf").revision == "refs/pr/3"
    )
    ref = parse_hf_link("https://hf.co/a/b/tree/main/Q4_K_M/")
    assert (ref.repo, ref.kind, ref.revision, ref.path) == ("a/b", "folder", "main", "Q4_K_M")
    mirror = parse_hf_link(
        "https://mirror.example/hf/a/b/blob/main/x.safetensors", "https://mirror.example/hf"
    )
    assert (mirror.repo, mirror.kind, mirror.path) == ("a/b", "file", "x.safetensors")
