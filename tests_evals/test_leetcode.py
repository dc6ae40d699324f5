"""Luau LeetCode: one item per problem. The reply's code runs in the sandbox against the
problem's Jest-Lua tests; the item passes only if every test passes."""

import pytest


@pytest.mark.leetcode
def test_leetcode(graded):
    graded.check()
