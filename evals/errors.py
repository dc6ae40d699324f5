"""The harness's public exceptions and warnings, all of them here, as httpx keeps its own in one
module. An error a user is told of carries a one-line message that names the cause and the fix.
The modules that raise them re-export them under the names they had there (`from
evals.providers.http import Unreachable` and the like keep working). Private ones stay beside
their code (`evals.run._Busy`, a sandbox's `_LimitReached`, a lexer's `LexError`).

The hierarchy (a class with two bases is drawn under each; tests/unit/test_names.py holds this
drawing to the classes below):

* Exception
  * EvalError - every error the harness reports to a user
    * UsageError - a wrong flag, a missing value, contradicting flags
      * BatchUnsupported
      * ExtensionError - installed packages that clash, or a broken entry point
    * DatasetError
    * DataFileError - models.json, a result file, a saved plan (`RegistryError`, its old name)
    * MetadataError
    * VerifyError
    * RemoteGraderError - a grading server (an eval's sandbox run elsewhere) cannot be used
    * ProviderError - a model call that failed for good; `kind` lands in result files
      * TransientError - worth retrying
        * Unreachable
        * MalformedReply
      * FatalProviderError
        * QuotaExhausted
    * FatalError - the run ends
      * FatalProviderError
      * StorageError
  * ApiError - an item whose model call failed (an error, not a wrong answer)
  * BatchWaiting - an item that waits in a Batch API batch
  * RescoreFailed
* ValueError
  * ReferenceFailed - the dataset's fault
  * FileLimitError - a file past the size or depth limit of what the harness reads
* UserWarning
  * CacheWarning
  * LedgerWarning
"""


class EvalError(Exception):
    """Base class for every error the harness reports to a user."""


class UsageError(EvalError):
    """A wrong flag, a missing value or contradicting flags."""


class ExtensionError(UsageError):
    """The installed packages' extensions cannot be loaded: two packages claim one name, or an
    entry point is broken. One line naming the packages and the fix; every command exits 2."""


class DatasetError(EvalError):
    """A dataset that cannot be read: missing file or column, malformed record."""


class DataFileError(EvalError):
    """A file of the board's data is invalid: data/models.json, a result file it names, a
    saved plan, or an eval's board column that cannot be drawn from them."""


RegistryError = DataFileError  # its name until 0.x: kept one release for packages that catch it


class MetadataError(EvalError):
    """A lookup that failed: an unreachable server, an HTTP error, a link that is not what was expected."""


class VerifyError(EvalError):
    """A published run cannot be rescored (its run folder or a cached call is missing), or a
    model asked for is not published."""


class RemoteGraderError(EvalError):
    """A grading server an eval runs model-written code on (its sandbox, elsewhere) cannot be
    used: unreachable, key rejected, no reply, or a reply off its protocol."""


class BatchUnsupported(UsageError):
    """The endpoint has no Batch API of the kind the provider speaks."""


class ProviderError(EvalError):
    """A model call that failed for good (after retries).

    `kind` is a short stable label that lands in result files ("rate_limit", "server_error",
    "timeout", "connection", "bad_request", "auth", "malformed_response", ...)."""

    def __init__(self, message: str, *, kind: str, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status


class TransientError(ProviderError):
    """A failure worth retrying: 429, 5xx, timeouts, dropped connections, garbled bodies."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        status: int | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message, kind=kind, status=status)
        self.retry_after = retry_after


class Unreachable(TransientError):
    """No connection could be made to the endpoint (refused, no such host, no route): nothing
    was sent. `call_with_retries` ends the run early when the endpoint never answered at all."""

    def __init__(self, message: str):
        super().__init__(message, kind="connection")


class MalformedReply(TransientError):
    """A 200 reply of the wrong shape. Its message names the field and the type found, never
    the value (which could be anything the server sent)."""

    def __init__(self, what: str):
        super().__init__(f"malformed reply: {what}", kind="malformed_response")


class FatalError(EvalError):
    """Continuing the run is pointless: every later item would fail the same way. The run ends."""


class FatalProviderError(ProviderError, FatalError):
    """The key is rejected, the quota is spent."""


class StorageError(FatalError):
    """A file of the run cannot be written: the disk is full, the folder read-only."""


class QuotaExhausted(FatalProviderError):
    """The provider says to come back much later (spent quota, daily cap)."""


# --- not errors a user is told of: an item's state, or a fault the harness reports in its own words


class ApiError(Exception):
    """The item's model call failed for good: reported as an error, not a wrong answer."""


class BatchWaiting(Exception):
    """The call waits in a Batch API batch (`--batch`): the item is reported as waiting."""

    def __init__(self, batch: str | None, status: str, since: str | None = None):
        self.batch, self.status, self.since = batch, status, since
        where = f"batch {batch} ({status})" if batch else "a batch not yet submitted"
        when = f" since {since}" if since else ""
        super().__init__(f"waiting in {where}{when}: run the same command again to collect it")


class RescoreFailed(Exception):
    """A published run that cannot be rescored; `detail` says why, in one line (verify's FAIL)."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class ReferenceFailed(ValueError):
    """A reference solution that does not pass its own tests: the dataset's fault."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the reference solution does not pass its own tests: {reason}")
        self.reason = reason  # the run's reason, e.g. "2 of 9 tests failed"


class FileLimitError(ValueError):
    """A file the harness reads that is past its limits (`evals.bounded`): larger than its size
    limit, nested deeper than its depth limit, or no regular file (a FIFO, a device, a folder).
    A ValueError, so what reports a corrupt file reports it; its message leaves the path to the
    caller's."""


# --- warnings


class CacheWarning(UserWarning):
    """A cache record could not be used and is being redone."""


class LedgerWarning(UserWarning):
    """A ledger file could not be read and was set aside."""
