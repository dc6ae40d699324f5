"""What a provider's Batch API speaks: named request sets in, one outcome per custom id out.

A provider that has a Batch API returns a `BatchAPI` from `Provider.batch_api()`; its module
only translates (request bodies, batch objects, result lines). Keeping batch ids, deciding
what to submit, polling and storing the answers is `evals.batch`'s work.

Every submission carries a `name` that the harness derives from the run and the requests'
content, and records before submitting: `submit` first looks for an upload and a batch of
that name (a run killed between the API's answer and the harness's record left them) and
only makes what it does not find, where the API keeps a name (OpenAI: the file name and the
batch's metadata; Anthropic's batches have neither)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field

from evals.errors import ProviderError, TransientError

from ._base import Completion, Request, status_error

# How long a lookup by name may page through the account's uploads and batches: the ones a
# killed run left are among the newest.
FIND_LIMIT = 1000


@dataclass(frozen=True)
class BatchState:
    """A batch as the API reports it. `ended`: no request in it will change any more, so its
    results can be collected (completed, failed, expired, cancelled alike)."""

    id: str
    status: str
    ended: bool
    counts: dict[str, int] = field(default_factory=dict)  # completed / failed / total
    problem: str | None = None  # why the whole batch failed, when it did
    results: tuple[str, ...] = ()  # where the API keeps its results (file ids, a URL)


Outcome = Completion | ProviderError


class BatchAPI(ABC):
    """One provider endpoint's Batch API. Every method makes its calls once and raises the
    provider's `ProviderError`s (a `TransientError` is worth calling again)."""

    max_requests: int  # per batch, as the API limits it
    max_bytes: int  # of one batch's requests, as the API limits it

    @abstractmethod
    def line(self, custom_id: str, request: Request) -> dict:
        """One request as the batch carries it (what its size is counted on)."""

    @abstractmethod
    def submit(self, name: str, lines: list[dict]) -> BatchState:
        """Create the batch (uploading its requests first where the API takes a file),
        reusing an upload or a batch of this name that an earlier, killed run left."""

    @abstractmethod
    def retrieve(self, batch_id: str) -> BatchState: ...

    @abstractmethod
    def results(self, state: BatchState) -> Iterator[tuple[str, Outcome]]:
        """(custom id, outcome) of every request of an ended batch that has one, in the
        API's order (not the submission's). A request with none was not run (the batch
        failed or was cut short): the caller treats it as expired."""

    @abstractmethod
    def cancel(self, batch_id: str) -> BatchState: ...


def not_run(why: str) -> TransientError:
    """A request the batch never ran (expired, cancelled, the batch failed): worth resubmitting."""
    return TransientError(f"the batch did not run the request ({why})", kind="batch_not_run")


def line_error(status: int, message: str) -> ProviderError:
    """A request that the batch ran and the API refused, as the same request refused over
    HTTP would be: 429 and 5xx worth resubmitting, the rest final."""
    return status_error(status, f"HTTP {status} in batch: {message}", {})
