"""`local`: a Hugging Face checkpoint folder (and a PEFT adapter) run in process with
transformers on torch, the optional extra `local` (`uv sync --extra local`).

This module registers the provider and imports little more; the provider itself,
`LocalProvider`, is in `_local.py`, imported at the first call (its names are re-exported
here)."""

from __future__ import annotations

from evals.flags import Flag
from evals.lazy import names_from
from evals.providers import ProviderInfo, register_provider

DEVICE = Flag(
    "--device",
    "local: where the model runs, auto (a GPU when there is one, else the CPU), cpu, cuda, cuda:N",
    str,
    forward=True,
    resume="provider",
)

# A Hugging Face checkpoint folder (and a PEFT adapter folder) run with transformers in
# process: greedy, so no temperature; the run records the files' hashes, not their paths.
register_provider(
    "local",
    ProviderInfo(
        "evals.providers._local:LocalProvider",
        frozenset({"thinking", "max_tokens", "adapter", "dtype"}),
        sampling=False,
        recorder="evals.providers.checkpoint:recorded",
        records=("model", "adapter", "dtype", "chatTemplate", "decoding", "maxNewTokens"),
        in_process=True,
        network=False,
        flags=(DEVICE,),
        position=50,
    ),
)

_MODULE = dict.fromkeys(("LocalProvider", "INSTALL"), "_local")
__getattr__ = names_from(__package__, _MODULE, globals())
