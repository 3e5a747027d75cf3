"""The local servers' JSON merge patch follows RFC 7396: the processing rules of
section 2 and the examples of section 3 and appendix A
(https://www.rfc-editor.org/rfc/rfc7396)."""
from __future__ import annotations

import copy

import pytest

from scalebridge.testing.merge_patch import merge_patch

APPENDIX_A = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize("target,patch,result", APPENDIX_A)
def test_the_appendix_a_examples(target, patch, result):
    assert merge_patch(target, patch) == result


def test_the_section_3_example():
    target = {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"},
              "tags": ["example", "sample"], "content": "This will be unchanged"}
    patch = {"title": "Hello!", "phoneNumber": "+01-123-456-7890", "author": {"familyName": None},
             "tags": ["example"]}
    assert merge_patch(target, patch) == {"title": "Hello!", "author": {"givenName": "John"},
                                          "tags": ["example"], "content": "This will be unchanged",
                                          "phoneNumber": "+01-123-456-7890"}


def test_neither_argument_changes_and_the_result_shares_nothing_of_the_patch():
    target, patch = {"a": {"b": [1]}, "c": 1}, {"a": {"d": [2]}, "c": None}
    before = copy.deepcopy((target, patch))
    out = merge_patch(target, patch)
    assert (target, patch) == before
    out["a"]["d"].append(3)
    assert patch["a"]["d"] == [2]
