"""RobloxQA: one item per question. A correct answer passes, a wrong one is reported wrong
(W; a failure with --wrong-fails), an API error is reported as an error."""

import pytest


@pytest.mark.multiple_choice
def test_multiple_choice(graded):
    graded.check()


@pytest.mark.freeform
def test_freeform(graded):
    graded.check()
