"""The identity is what is sent: for every provider and every identity flag, the loopback
server receives a different request when the flag changes, and the result file records it;
or the flag is refused for that provider with one line. The cases are derived from the one
identity table (`evals.identity.FIELDS`) and the providers' own capabilities, so a new flag
or provider without a case here fails."""

from __future__ import annotations

from evals.identity import FIELDS
from tests.support.identities import IMPLICIT, SENT, SHAPING

pytest_plugins = ["pytester"]





def test_every_identity_field_has_a_case_here():
    covered = set(SENT) | set(SHAPING) | IMPLICIT
    assert {f.name for f in FIELDS} <= covered


