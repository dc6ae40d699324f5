"""A third party's provider, as docs/writing-a-provider.md builds it: `echo` repeats the prompt,
with its own how-to-run flag `--stutter` and its own identity flag `--shout` (what it sends:
a different value is a different run). Loaded with `pytest -p tests.support.echo_provider` (a package would
name this module in its `roblox_evals` entry point)."""

from __future__ import annotations

from evals.extensions import register_provider
from evals.flags import Field, Flag
from evals.providers import Completion, Provider, ProviderInfo, Request, Usage

STUTTER = Flag("--stutter", "echo: repeat each reply twice", forward=True)
SHOUT = Field("shout", "shout", "echo: reply in capitals", kind=bool, slug="shout", default=False)


class EchoProvider(Provider):
    def complete(self, request: Request, *, timeout: float) -> Completion:
        text = request.prompt.split("\n")[0]
        if self.spec.value("shout"):
            text = text.upper()
        if self.spec.option("stutter"):
            text = f"{text} {text}"
        return Completion(text=text, usage=Usage(input=1, output=1), model=self.spec.model)


register_provider(
    "echo",
    ProviderInfo(
        "tests.support.echo_provider:EchoProvider",
        frozenset({"max_tokens"}),
        network=False,
        flags=(STUTTER,),
        fields=(SHOUT,),
        position=60,
    ),
)
