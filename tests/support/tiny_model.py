"""A tiny randomly initialised checkpoint and LoRA adapter, made on the spot (no download):
for the local provider's tests and `bench/local.py`.

The checkpoint is a 2-layer Llama with a byte-level BPE tokenizer trained on the bundled
questions, and a chat template that writes a visible marker (`TEMPLATE_MARKER`), so a test can
see that prompts went through it. The adapter's LoRA weights are random, not the usual zeros,
so it changes the greedy replies."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import ROOT

TEMPLATE_MARKER = "<<tiny-template>>"
CHAT_TEMPLATE = (
    TEMPLATE_MARKER
    + "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    + "{% if add_generation_prompt %}<|assistant|>{% if enable_thinking %}<think>{% endif %}{% endif %}"
)
SPECIALS = ["<|pad|>", "<|eos|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>"]


def corpus() -> list[str]:
    rows = [
        json.loads(line)
        for line in (ROOT / "data" / "robloxqa" / "multiple_choice.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return [json.dumps(row) for row in rows] + [
        TEMPLATE_MARKER,
        "<think>",
        "</think>",
        "Answer: A B C D",
    ]


def build_checkpoint(
    folder: Path, *, layers: int = 2, hidden: int = 64, vocab: int = 800, seed: int = 0
) -> Path:
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        corpus(),
        trainers.BpeTrainer(
            vocab_size=vocab,
            special_tokens=SPECIALS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|eos|>", pad_token="<|pad|>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=bpe.get_vocab_size(),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).to(torch.float32)
    folder.mkdir(parents=True, exist_ok=True)
    transformers.utils.logging.disable_progress_bar()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_adapter(checkpoint: Path, folder: Path, *, seed: int = 1) -> Path:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32)
    lora = LoraConfig(
        r=8,
        lora_alpha=32,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "down_proj"],
        init_lora_weights=False,
    )  # random A and B: the adapter changes the output
    get_peft_model(base, lora).save_pretrained(folder)
    return folder
