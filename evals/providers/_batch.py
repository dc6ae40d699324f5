"""What a provider's Batch API speaks: named request sets in, one outcome per custom id out.

A provider that has a Batch API returns a `BatchAPI` from `Provider.batch_api()`; its module
only translates (request bodies, batch objects, result lines). Keeping batch ids, deciding
what to submit, polling and storing the answers is `evals.askers.batch`'s work.

Every submission carries a `name` that the harness derives from the run and the requests'
content, and records before submitting: `submit` first looks for an upload and a batch of
that name (a run killed between the API's answer and the harness's record left them) and
only makes what it does not find, where the API keeps a name (OpenAI: the file name and the
batch's metadata; Anthropic's batches have neither)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from evals.errors import BatchUnsupported, ProviderError, TransientError

from ._base import Completion, Request, error_in_body, reply_body, status_error

# How far a lookup by name pages through the account's uploads and batches (newest first): a
# request per page, whatever size of page the server chose, and none past the page that
# reaches back before the submission was prepared (less FIND_SKEW, for the server's clock),
# since what a killed run left is newer than that.
FIND_PAGES = 10
FIND_SKEW = 3600.0


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


RequestOutcome = Completion | ProviderError


class BatchAPI(ABC):
    """One provider endpoint's Batch API. Every method makes its calls once and raises the
    provider's `ProviderError`s (a `TransientError` is worth calling again)."""

    max_requests: int  # per batch, as the API limits it
    max_bytes: int  # of one batch's requests, as the API limits it

    @abstractmethod
    def line(self, custom_id: str, request: Request) -> dict:
        """One request as the batch carries it (what its size is counted on)."""

    @abstractmethod
    def submit(
        self, name: str, lines: list[dict], *, since: float, sending: Callable[[], None]
    ) -> BatchState:
        """Create the batch (uploading its requests first where the API takes a file),
        reusing an upload or a batch of this name that an earlier, killed run left (not
        made before `since`, a Unix time). `sending()` is called before the first call that
        may make something (an upload, the create call): until then, a failure left nothing
        on the API's side. A `ProviderError` that is not transient means the API made no
        batch of them: nothing is left that a later run must collect."""

    def find(self, name: str, *, since: float) -> BatchState | None:
        """The batch of this name, made since `since`, if the API has one: where the API
        keeps no name, never (what a run without --batch asks of a submission a killed run
        left before it heard the API's answer)."""
        return None

    @abstractmethod
    def retrieve(self, batch_id: str) -> BatchState: ...

    @abstractmethod
    def results(self, state: BatchState) -> Iterator[tuple[str, RequestOutcome]]:
        """(custom id, outcome) of every request of an ended batch that has one, in the
        API's order (not the submission's). A request with none was not run (the batch
        failed or was cut short): the caller treats it as expired."""


def batch_reply(raw: bytes) -> dict:
    """A Batch API call's JSON body. Some proxies (LiteLLM) answer a call they cannot make
    with a 200 whose body is only an `error`: that is the refusal it stands for
    (`error_in_body`), not a malformed reply to retry."""
    body = reply_body(raw)
    if "id" not in body and (error := error_in_body(body)) is not None:
        raise error
    return body


def not_run(why: str) -> TransientError:
    """A request the batch never ran (expired, cancelled, the batch failed): worth resubmitting."""
    return TransientError(f"the batch did not run the request ({why})", kind="batch_not_run")


def line_error(status: int, message: str) -> ProviderError:
    """A request that the batch ran and the API refused, as the same request refused over
    HTTP would be: 429 and 5xx worth resubmitting, the rest final."""
    return status_error(status, f"HTTP {status} in batch: {message}", {})
