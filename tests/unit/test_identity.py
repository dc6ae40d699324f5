"""The identity is what is sent; here, that every field of the one identity table
(`evals.identity.FIELDS`) has a case in tests/support/identities.py, so a new field without one
fails. That each case changes the request and the result file is tests/e2e/test_identity.py."""

from __future__ import annotations

from evals.identity import FIELDS
from tests.support.identities import IMPLICIT, SENT, SHAPING

pytest_plugins = ["pytester"]


def test_every_identity_field_has_a_case_here():
    covered = set(SENT) | set(SHAPING) | IMPLICIT
    assert {f.name for f in FIELDS} <= covered
