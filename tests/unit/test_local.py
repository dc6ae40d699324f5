"""`--provider local` through the provider itself, with a tiny random checkpoint and LoRA adapter
made on the spot (no download): batched replies equal one-by-one ones, concurrent calls share
forward passes, the adapter changes the identity and the replies, the chat template and thinking,
the files' content hashed once, and every bad folder or flag is one line. The command line is
tests/e2e/test_local.py."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from evals.errors import UsageError
from evals.identity import from_values
from evals.providers import ProviderSpec, Request, effective_spec, make_provider
from tests.support.harness import (
    ROOT,
)
from tests.support.tiny_model import TEMPLATE_MARKER

MAX_TOKENS = 6
PROMPTS = [
    Request(
        prompt=f"Which service replicates {name}?",
        system="You are a Roblox expert.",
        max_tokens=MAX_TOKENS,
    )
    for name in (
        "RemoteEvents",
        "parts",
        "a tool",
        "the leaderstats folder",
        "a very long question " * 6,
    )
]


# The harness's cache folder (file hashes) is the session's, never the user's.
pytestmark = pytest.mark.usefixtures("own_cache")


def provider_for(checkpoint: Path, **spec):
    return make_provider(
        effective_spec(ProviderSpec("local", str(checkpoint), max_tokens=MAX_TOKENS, **spec))
    )


@pytest.fixture(scope="session")
def base(tiny):
    """Loaded here: a test that renders before any other generated must not find it unloaded
    (xdist deals these tests to either worker, in any order)."""
    provider = provider_for(tiny["checkpoint"])
    provider.load()
    return provider


def test_batched_replies_equal_one_by_one(base):
    batched = base.complete_all(PROMPTS)
    alone = [base.complete_all([request])[0] for request in PROMPTS]
    assert [(c.text, c.usage, c.finish_reason) for c in batched] == [
        (c.text, c.usage, c.finish_reason) for c in alone
    ]
    assert (
        len({c.usage.input for c in batched}) > 1
    )  # prompts of different lengths: padding was needed


def test_concurrent_calls_share_forward_passes(tiny):
    """Calls made at once, as EvalRun's prefetch threads make them, are generated in batches
    and each caller gets its own prompt's reply."""
    provider = provider_for(tiny["checkpoint"])
    expected = [c.text for c in provider.complete_all(PROMPTS)]
    provider.batches.clear()
    replies: dict[int, str] = {}
    start = threading.Barrier(len(PROMPTS))

    def ask(i: int) -> None:
        start.wait()
        replies[i] = provider.complete(PROMPTS[i], timeout=60).text

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(PROMPTS))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [replies[i] for i in range(len(PROMPTS))] == expected
    assert sum(provider.batches) == len(PROMPTS) and len(provider.batches) < len(PROMPTS)


def test_the_adapter_changes_the_identity_and_the_replies(tiny, base):
    with_adapter = provider_for(tiny["checkpoint"], adapter=str(tiny["adapter"]))
    assert with_adapter.spec.identity()["adapter"].startswith("sha256:")
    assert with_adapter.spec.identity() != base.spec.identity()
    assert [c.text for c in with_adapter.complete_all(PROMPTS)] != [
        c.text for c in base.complete_all(PROMPTS)
    ]

    def run_name(**values):
        from evals.plan import plan
        from evals.tasks import TASKS

        ident = from_values({"provider": "local", "model": str(tiny["checkpoint"]), **values})
        return plan(TASKS["multiple_choice"], ident).config.run_name

    assert run_name() != run_name(adapter=str(tiny["adapter"]))
    assert run_name(adapter=str(tiny["adapter"])).startswith("local-") and "-adapter-" in run_name(
        adapter=str(tiny["adapter"])
    )


def test_the_chat_template_renders_the_prompt(base):
    rendered = base.render(PROMPTS[0])
    assert rendered.startswith(TEMPLATE_MARKER)
    assert (
        "<|system|>You are a Roblox expert.<|end|><|user|>Which service replicates RemoteEvents?<|end|><|assistant|>"
        in rendered
    )
    assert not rendered.endswith("<think>")
    (reply,) = base.complete_all([PROMPTS[0]])
    assert reply.usage.input == len(base.tokenizer(rendered, add_special_tokens=False)["input_ids"])


def test_thinking_opens_the_block_and_the_block_is_the_reasoning(tiny, base):
    thinking = provider_for(tiny["checkpoint"], thinking=True)
    thinking.load()
    assert thinking.render(PROMPTS[0]).endswith("<|assistant|>" + "<think>")
    tokens = base.tokenizer(
        "<think>RemoteEvent</think>Answer: B<|eos|><|pad|><|pad|>", add_special_tokens=False
    )["input_ids"]
    reply = base._completion(tokens, prompt_tokens=10)
    assert (reply.text, reply.reasoning, reply.finish_reason) == (
        "Answer: B",
        "RemoteEvent",
        "stop",
    )
    assert (
        reply.usage.output == len(tokens) - 2
        and reply.usage.input == 10
        and reply.usage.reasoning > 0
    )


def test_the_identity_is_the_files_content_hashed_once(tiny, tmp_path, monkeypatch):
    from evals.providers import checkpoint as files

    copy = shutil.copytree(tiny["checkpoint"], tmp_path / "copy")
    recorded = dict(effective_spec(ProviderSpec("local", str(copy))).recorded)
    assert recorded == dict(effective_spec(ProviderSpec("local", str(tiny["checkpoint"]))).recorded)
    monkeypatch.setattr(files, "_sha256", lambda path: pytest.fail(f"{path} was hashed again"))
    assert dict(effective_spec(ProviderSpec("local", str(copy))).recorded) == recorded  # remembered
    monkeypatch.undo()
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    changed = dict(effective_spec(ProviderSpec("local", str(copy))).recorded)
    assert (
        changed["model"] != recorded["model"]
        and changed["chatTemplate"] == recorded["chatTemplate"]
    )


@pytest.mark.parametrize(
    "values, message",
    [
        ({"model": "/no/such/folder"}, "--model /no/such/folder: no such folder"),
        ({"model": str(ROOT / "data")}, "not a checkpoint folder (no config.json)"),
        (
            {"adapter": str(ROOT / "data")},
            "--adapter {}: not a PEFT adapter folder".format(ROOT / "data"),
        ),
        ({"adapter": "/no/such/adapter"}, "--adapter /no/such/adapter: no such folder"),
        ({"dtype": "float8"}, "--dtype 'float8' is unknown"),
        ({"effort": "high"}, "--effort is not sent by --provider local"),
    ],
)
def test_folders_and_flags_are_checked_with_one_line(tiny, values, message):
    with pytest.raises(UsageError) as raised:
        from_values({"provider": "local", "model": str(tiny["checkpoint"]), **values})
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_other_providers_refuse_the_local_flags():
    for flag, value in (("adapter", "/some/adapter"), ("dtype", "float16")):
        with pytest.raises(
            UsageError, match=f"--{flag} is not sent by --provider openai.*applies to local"
        ):
            from_values({"provider": "openai", "model": "gpt-5.5", flag: value})
