"""Model repositories as the Hub and OpenRouter describe them, for the metadata lookups' tests."""

from __future__ import annotations

from tests.support.loopback.hub_server import RepoFile


def openrouter_model(
    model_id: str,
    name: str,
    created: int,
    prompt: str,
    completion: str,
    *,
    hugging_face_id: str | None = "",
    context: int = 131072,
) -> dict:
    """One entry of OpenRouter's `data`, with the fields the real list carries."""
    return {
        "id": model_id,
        "canonical_slug": model_id.split(":")[0],
        "hugging_face_id": hugging_face_id,
        "name": name,
        "created": created,
        "description": f"{name} via OpenRouter.",
        "context_length": context,
        "architecture": {
            "modality": "text->text",
            "input_modalities": ["text"],
            "output_modalities": ["text"],
            "tokenizer": "Other",
            "instruct_type": None,
        },
        "pricing": {
            "prompt": prompt,
            "completion": completion,
            "request": "0",
            "image": "0",
            "web_search": "0",
            "internal_reasoning": "0",
        },
        "top_provider": {
            "context_length": context,
            "max_completion_tokens": 16384,
            "is_moderated": False,
        },
        "per_request_limits": None,
        "supported_parameters": ["max_tokens", "temperature", "top_p", "tools"],
        "default_parameters": {},
    }


MODELS = [
    openrouter_model(
        "openai/gpt-5.5", "OpenAI: GPT-5.5", 1772582400, "0.00000125", "0.00001", context=400000
    ),
    openrouter_model(
        "anthropic/claude-sonnet-4.5",
        "Anthropic: Claude Sonnet 4.5",
        1759161676,
        "0.000003",
        "0.000015",
        hugging_face_id=None,
    ),
    openrouter_model(
        "anthropic/claude-3.7-sonnet:beta",
        "Anthropic: Claude 3.7 Sonnet (self-moderated)",
        1740422110,
        "0.000003",
        "0.000015",
    ),
    openrouter_model(
        "qwen/qwen3-235b-a22b-2507",
        "Qwen: Qwen3 235B A22B Instruct 2507",
        1753119555,
        "0.000000078",
        "0.000000312",
        hugging_face_id="tiny-org/Tiny-Chat-8B",
    ),
    openrouter_model(
        "qwen/qwen3-235b-a22b-2507:free",
        "Qwen: Qwen3 235B A22B Instruct 2507 (free)",
        1753119555,
        "0",
        "0",
        hugging_face_id="tiny-org/Tiny-Chat-8B",
    ),
    openrouter_model(
        "z-ai/glm-4.6",
        "Z.AI: GLM 4.6",
        1759235576,
        "0.0000004",
        "0.00000175",
        hugging_face_id="gated-org/Locked-70B",
    ),
    openrouter_model(
        "moonshotai/kimi-k2-0905",
        "MoonshotAI: Kimi K2 0905",
        1757021147,
        "0.000000333333333",
        "0.0000025",
        hugging_face_id="moonshotai/Kimi-K2-Instruct-0905",
    ),
    openrouter_model(
        "thedrummer/rocinante-12b",
        "TheDrummer: Rocinante 12B",
        1727654400,
        "0.00000017",
        "0.00000043",
    ),
    # Midnight UTC minus one second: a local-time conversion would give another day.
    openrouter_model("x-ai/grok-4", "xAI: Grok 4", 1767225599, "0.000003", "0.000015"),
    openrouter_model(
        "openrouter/auto", "Auto Router", 1699401600, "-1", "-1", hugging_face_id=None
    ),
]


def File(size: int, lfs: bool) -> RepoFile:
    return RepoFile(size=size, lfs=lfs)


SHARDS = [4_976_698_672, 4_999_802_720, 4_915_916_176, 1_168_138_808]


Q8_PARTS = [3_998_766_432, 3_987_611_520, 537_120_128]


CKPT_BIN = [9_976_576_152, 3_500_296_424]


# The Hub's repositories, file by file (size, stored in LFS).
REPOS: dict[str, dict[str, File]] = {
    "tiny-org/Tiny-Chat-8B": {
        ".gitattributes": File(1_519, False),
        "README.md": File(38_812, False),
        "LICENSE": File(7_627, False),
        "config.json": File(855, False),
        "generation_config.json": File(184, False),
        **{
            f"model-{i:05d}-of-00004.safetensors": File(size, True)
            for i, size in enumerate(SHARDS, 1)
        },
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
        **{
            f"Q8_0/Tiny-Chat-8B-Q8_0-{i:05d}-of-00003.gguf": File(size, True)
            for i, size in enumerate(Q8_PARTS, 1)
        },
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
