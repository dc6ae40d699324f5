"""Moved to `evals.askers.batch`; `evaluate` still reads a run's batches through these two names."""

from evals.askers.batch import describe, has_batches

__all__ = ["describe", "has_batches"]
