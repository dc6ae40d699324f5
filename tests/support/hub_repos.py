"""Model repositories as the Hub and OpenRouter describe them, for the metadata lookups' tests."""

from __future__ import annotations

from tests.support.loopback.hub_server import RepoFile


def openrouter_model(model_id: str, name: str, created: int, prompt: str, completion: str, *,
                     hugging_face_id: str | None = "", context: int = 131072) -> dict:
    """One entry of OpenRouter's `data`, with the fields the real list carries."""
    return {
        "id": model_id,
        "canonical_slug": model_id.split(":")[0],
        "hugging_face_id": hugging_face_id,
        "name": name,
        "created": created,
        "description": f"{name} via OpenRouter.",
        "context_length": context,
        "architecture": {"modality": "text->text", "input_modalities": ["text"], "output_modalities": ["text"],
                         "tokenizer": "Other", "instruct_type": None},
        "pricing": {"prompt": prompt, "completion": completion, "request": "0", "image": "0",
                    "web_search": "0", "internal_reasoning": "0"},
        "top_provider": {"context_length": context, "max_completion_tokens": 16384, "is_moderated": False},
        "per_request_limits": None,
        "supported_parameters": ["max_tokens", "temperature", "top_p", "tools"],
        "default_parameters": {},
    }


MODELS = [
    openrouter_model("openai/gpt-5.5", "OpenAI: GPT-5.5", 1772582400, "0.00000125", "0.00001",
                     context=400000),
    openrouter_model("anthropic/claude-sonnet-4.5", "Anthropic: Claude Sonnet 4.5", 1759161676,
                     "0.000003", "0.000015", hugging_face_id=None),
    openrouter_model("anthropic/claude-3.7-sonnet:beta", "Anthropic: Claude 3.7 Sonnet (self-moderated)",
                     1740422110, "0.000003", "0.000015"),
    openrouter_model("qwen/qwen3-235b-a22b-2507", "Qwen: Qwen3 235B A22B Instruct 2507", 1753119555,
                     "0.000000078", "0.000000312", hugging_face_id="tiny-org/Tiny-Chat-8B"),
    openrouter_model("qwen/qwen3-235b-a22b-2507:free", "Qwen: Qwen3 235B A22B Instruct 2507 (free)", 1753119555,
                     "0", "0", hugging_face_id="tiny-org/Tiny-Chat-8B"),
    openrouter_model("z-ai/glm-4.6", "Z.AI: GLM 4.6", 1759235576, "0.0000004", "0.00000175",
                     hugging_face_id="gated-org/Locked-70B"),
    openrouter_model("moonshotai/kimi-k2-0905", "MoonshotAI: Kimi K2 0905", 1757021147,
                     "0.000000333333333", "0.0000025", hugging_face_id="moonshotai/Kimi-K2-Instruct-0905"),
    openrouter_model("thedrummer/rocinante-12b", "TheDrummer: Rocinante 12B", 1727654400,
                     "0.00000017", "0.00000043"),
    # Midnight UTC minus one second: a local-time conversion would give another day.
    openrouter_model("x-ai/grok-4", "xAI: Grok 4", 1767225599, "0.000003", "0.000015"),
    openrouter_model("openrouter/auto", "Auto Router", 1699401600, "-1", "-1", hugging_face_id=None),
]


def File(size: int, lfs: bool) -> RepoFile:
    return RepoFile(size=size, lfs=lfs)


SHARDS = [4_976_698_672, 4_999_802_720, 4_915_916_176, 1_168_138_808]


Q8_PARTS = [3_998_766_432, 3_987_611_520, 537_120_128]


CKPT_BIN = [9_976_576_152, 3_500_296_424]
