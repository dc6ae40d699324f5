"""The harness's exceptions: each carries a one-line message that names the cause and the fix."""


class EvalError(Exception):
    """Base class for every error the harness reports to a user."""


class UsageError(EvalError):
    """A wrong flag, a missing value or contradicting flags."""


class DatasetError(EvalError):
    """A dataset that cannot be read: missing file or column, malformed record."""


class RegistryError(EvalError):
    """data/models.json or a result file it names is invalid."""


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

    def __init__(self, message: str, *, kind: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message, kind=kind, status=status)
        self.retry_after = retry_after


class FatalError(EvalError):
    """Continuing the run is pointless: every later item would fail the same way. The run ends."""


class FatalProviderError(ProviderError, FatalError):
    """The key is rejected, the quota is spent."""


class StorageError(FatalError):
    """A file of the run cannot be written: the disk is full, the folder read-only."""


class QuotaExhausted(FatalProviderError):
    """The provider says to come back much later (spent quota, daily cap)."""
