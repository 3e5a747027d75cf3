"""A remembered secret is masked in each form an output gives it: as written, in a
Python repr (alone, in a container, beside a quote), in JSON (ASCII-escaped or not,
a repr inside a JSON log line), URL-quoted (``%20`` or ``+`` for a space)."""
from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

import pytest

from scalebridge import secrets

SECRET = 'Tok\\en"wi\'th é/&+ 42'


@pytest.fixture(autouse=True)
def _fresh():
    secrets.forget_all()
    secrets.remember(SECRET)
    yield
    secrets.forget_all()


@pytest.mark.parametrize("shown", [
    SECRET, repr(SECRET), repr([SECRET]), repr({"arm_endpoint": SECRET}), str(("x", SECRET)),
    json.dumps(SECRET), json.dumps({"k": SECRET}, ensure_ascii=False), json.dumps({"msg": repr(SECRET)}),
    quote(SECRET, safe=""), quote(SECRET), quote_plus(SECRET), f"https://h/{quote(SECRET)}?q={quote_plus(SECRET)}",
], ids=["plain", "repr", "repr in a list", "repr in a dict", "str of a tuple", "json", "json unicode",
        "repr in json", "url path segment", "url path", "url query", "in a url"])
def test_every_form_of_a_secret_is_masked(shown):
    masked = secrets.redact(shown)
    assert "***" in masked and "Tok" not in masked and "42" not in masked, masked


def test_short_values_and_other_text_are_left_alone():
    secrets.remember("short")
    assert secrets.redact("a short word, Token, en") == "a short word, Token, en"
