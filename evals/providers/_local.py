"""The `local` provider itself (registered by `evals.providers.local`, which imports this
module at the first call): a Hugging Face checkpoint folder (and a PEFT adapter) run in process with
transformers on torch, the optional extra `local` (`uv sync --extra local`).

EvalRun's prefetch threads call `complete` concurrently, as for an API; here each call only
queues its request and waits. One generation thread takes the waiting requests (up to
`max_batch`, after a few milliseconds for more to arrive) and answers them with one greedy
`generate` over a left-padded batch with its attention mask, so several prompts share each
forward pass. Greedy decoding with a proper mask gives every prompt the reply it gets alone
(tested), so batching is not part of the identity. Prompts are rendered by the checkpoint's own
chat template; a `<think>` block in the reply is its reasoning, as for every provider
(`evals.reasoning`)."""

from __future__ import annotations

import importlib.util
import queue
import re
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from evals.errors import FatalProviderError, ProviderError, TransientError, UsageError
from evals.reasoning import split as split_reasoning

from ._base import Completion, Provider, ProviderSpec, Request, Usage
from .checkpoint import DEFAULT_MAX_NEW_TOKENS, adapter_folder, checkpoint_folder, resolved_dtype

INSTALL = (
    "--provider local needs the optional extra `local` (torch, transformers, peft): install it "
    "with `uv sync --extra local`"
)


@dataclass
class _Waiting:
    request: Request
    future: Future


class LocalProvider(Provider):
    """The folders are checked when the provider is made; the model is loaded once per
    process, when the first prompt is generated."""

    max_batch = 16  # prompts per forward pass
    gather = 0.01  # seconds the generation thread waits for more requests after the first

    def __init__(self, spec: ProviderSpec):
        super().__init__(spec)
        self._model_dir = checkpoint_folder(spec.model)
        self._adapter_dir = adapter_folder(spec.adapter) if spec.adapter else None
        _require("torch", "transformers", *(["peft"] if spec.adapter else []))
        self._device = _device_name(spec.device)
        self.model: Any = (
            None  # loaded at the first generation: a finished run's rerun loads no weights
        )
        self.tokenizer: Any = None
        self._load_lock = threading.Lock()
        self.batches: list[int] = []  # the size of each generate call, for tests and the bench
        self._queue: queue.Queue[_Waiting] = queue.Queue()
        self._pending: dict[
            Request, Future
        ] = {}  # a retry after a timeout waits on the same answer
        self._pending_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def load(self) -> None:
        """Import torch and load the tokenizer, the weights and the adapter, once: a rerun of
        a finished run, which asks nothing, does neither. A checkpoint that does not load ends
        the run (every item would fail the same way)."""
        with self._load_lock:
            if self.model is not None:
                return
            import torch
            import transformers

            transformers.utils.logging.disable_progress_bar()  # no bars in the harness's output
            device = _device(self._device)
            try:
                tokenizer = transformers.AutoTokenizer.from_pretrained(self._model_dir)
                tokenizer.padding_side = "left"  # new tokens follow every prompt directly
                if tokenizer.pad_token is None:
                    tokenizer.pad_token = tokenizer.eos_token
                dtype = getattr(torch, resolved_dtype(self._model_dir, self.spec.dtype))
                # transformers' model, or peft's around it (whose types call `.to` a decorated method).
                model: Any = transformers.AutoModelForCausalLM.from_pretrained(
                    self._model_dir, dtype=dtype
                )
                if self._adapter_dir:
                    import peft

                    model = peft.PeftModel.from_pretrained(model, self._adapter_dir)
                self.model = model.to(device).eval()
                self.tokenizer = tokenizer
            except Exception as error:  # noqa: BLE001 - whatever transformers raises, one line
                raise FatalProviderError(
                    f"--model {self.spec.model}: the checkpoint does not load "
                    f"({type(error).__name__}: {error})",
                    kind="local_load",
                ) from None

    def complete(self, request: Request, *, timeout: float) -> Completion:
        with self._pending_lock:
            future = self._pending.get(request)
            if future is None:
                future = self._pending[request] = Future()
                self._queue.put(_Waiting(request, future))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._generate_forever, name="local-generate", daemon=True
                )
                self._thread.start()
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:  # still queued or generating: the retry waits on the same answer
            raise TransientError(
                f"no reply after {timeout:.0f} s: the local model is still generating",
                kind="timeout",
            ) from None
        finally:
            if future.done():
                with self._pending_lock:
                    if self._pending.get(request) is future:
                        del self._pending[request]

    def complete_all(self, requests: list[Request]) -> list[Completion]:
        """Answer `requests` in one batch, on the calling thread (the tests and the bench)."""
        self.load()
        return self._generate(requests)

    # -- the generation thread ---------------------------------------------------------

    def _generate_forever(self) -> None:
        while True:
            batch = self._next_batch()
            try:
                self.load()
                replies = self._generate([w.request for w in batch])
            except ProviderError as error:
                for waiting in batch:
                    waiting.future.set_exception(error)
                continue
            except Exception as error:  # noqa: BLE001 - each caller gets the failure as its call's error
                failure = ProviderError(
                    f"local generation failed: {type(error).__name__}: {error}", kind="local_error"
                )
                for waiting in batch:
                    waiting.future.set_exception(failure)
                continue
            for waiting, reply in zip(batch, replies):
                waiting.future.set_result(reply)

    def _next_batch(self) -> list[_Waiting]:
        """The first waiting request, and those that arrive within `gather` seconds with the
        same generation length, up to `max_batch`; others wait for the next batch."""
        first = self._queue.get()
        batch: list[_Waiting] = [first]
        later: list[_Waiting] = []
        deadline = time.monotonic() + self.gather
        while len(batch) < self.max_batch:
            try:
                waiting = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            (batch if waiting.request.max_tokens == first.request.max_tokens else later).append(
                waiting
            )
        for waiting in later:
            self._queue.put(waiting)
        return batch

    def _generate(self, requests: list[Request]) -> list[Completion]:
        import torch

        prompts = [self.render(request) for request in requests]
        inputs = self.tokenizer(
            prompts, return_tensors="pt", padding=True, add_special_tokens=False
        ).to(self.model.device)
        max_new = requests[0].max_tokens or self.spec.max_tokens or DEFAULT_MAX_NEW_TOKENS
        with torch.inference_mode():
            output = self.model.generate(
                **inputs,
                do_sample=False,
                max_new_tokens=max_new,
                pad_token_id=self.tokenizer.pad_token_id,
                temperature=None,
                top_p=None,
                top_k=None,
            )
        self.batches.append(len(requests))
        width = inputs["input_ids"].shape[1]
        return [
            self._completion(row[width:].tolist(), int(mask.sum()))
            for row, mask in zip(output, inputs["attention_mask"])
        ]

    def render(self, request: Request) -> str:
        """The prompt as the model is given it: the checkpoint's chat template, system prompt
        first, with `enable_thinking` as --thinking says."""
        messages = [{"role": "system", "content": request.system}] if request.system else []
        messages.append({"role": "user", "content": request.prompt})
        return self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False, enable_thinking=self.spec.thinking
        )

    def _completion(self, tokens: list[int], prompt_tokens: int) -> Completion:
        """One row of new tokens: up to and including the first end-of-sequence token (the
        rest is padding), its `<think>` block apart from the answer."""
        ends = _eos_ids(self.model, self.tokenizer)
        stop = next((i for i, token in enumerate(tokens) if token in ends), None)
        tokens = tokens if stop is None else tokens[: stop + 1]
        # Its `<think>` block (which the template may have opened in the prompt) apart, as every
        # provider's reply is kept (`Completion.kept`): here to count the reasoning's tokens.
        reasoning, text = split_reasoning(self.tokenizer.decode(tokens, skip_special_tokens=True))
        reasoning_tokens = (
            len(self.tokenizer(reasoning, add_special_tokens=False)["input_ids"])
            if reasoning
            else 0
        )
        return Completion(
            text=text,
            reasoning=reasoning,
            usage=Usage(
                input=prompt_tokens,
                output=len(tokens),
                reasoning=min(reasoning_tokens, len(tokens)),
            ),
            finish_reason="length" if stop is None else "stop",
            model=dict(self.spec.recorded).get("model"),
        )


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    """The tokens that end a reply: the generation config's (one or several) and the tokenizer's."""
    configured = model.generation_config.eos_token_id
    ids = set(
        configured
        if isinstance(configured, list)
        else [configured]
        if configured is not None
        else []
    )
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids


def _require(*modules: str) -> None:
    """The extra's packages are there (found, not imported: importing torch takes seconds)."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise UsageError(INSTALL)


def _device_name(name: str | None) -> str:
    """--device, checked before anything loads: auto, cpu, mps, cuda or cuda:N (xpu likewise)."""
    name = name or "auto"
    if not re.fullmatch(r"auto|cpu|mps|(cuda|xpu)(:\d+)?", name):
        raise UsageError(f"--device {name!r} is not a device; use auto, cpu, cuda or cuda:N")
    return name


def _device(name: str) -> str:
    """auto is the GPU when there is one, else the CPU. A GPU asked for and not there ends
    the run, found when the model loads."""
    import torch

    if name == "auto":
        return (
            "cuda"
            if torch.cuda.is_available()
            else "mps"
            if torch.backends.mps.is_available()
            else "cpu"
        )
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise FatalProviderError(
            f"--device {name}: torch sees no CUDA GPU here; use --device cpu (or auto)",
            kind="local_load",
        )
    return name
