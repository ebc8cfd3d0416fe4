"""The secret gates' helpers: the token-shape pre-filter finds exactly what a full detect-secrets scan finds, fields
are named as the user gave them, and a rendered record's line is named by its field (never by a file path)."""

from __future__ import annotations

import random

import pytest
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import transient_settings

from git_memzoi.core import secret_scan
from git_memzoi.errors import InputError
from git_memzoi.memzoi.records import secrets
from tests.memzoi.records.test_secrets import negatives, positives


def _key() -> str:
    rng = random.Random(7)
    return "AKIA" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ234567") for _ in range(16))


def test_the_prefilter_skips_only_lines_detect_secrets_would_not_flag() -> None:
    rng = random.Random(20261130)
    lines = [line for _, text in positives(rng) + negatives(rng) for line in text.splitlines()]
    with transient_settings({"plugins_used": [{"name": name} for name in secrets.SECRET_PLUGINS]}):
        full = [sorted({s.type for s in scan_line(line)}) for line in lines]
    shapes = secret_scan._token_shapes()
    assert all(any(s.search(line) for s in shapes) for line, found in zip(lines, full, strict=True) if found)
    secret_scan._classify_cached.cache_clear()
    assert secrets.classify_all(lines, personal=False) == [secrets.classify(line, personal=False) for line in lines]


def test_fields_are_named_with_the_line_or_item_the_user_gave() -> None:
    key = _key()
    found = secrets.first_credentials(
        [
            {"--title": "Deploy", "--body": f"one\ntwo {key}"},
            {"applies_to": ["src/a.py", f"{key}/b.py"]},
            {"origin": {"k": key}},
            {"body": "clean", "tags": None},
        ]
    )
    assert [None if f is None else (f[0], f[1].rule) for f in found] == [
        ("--body line 2", "AWS Access Key"),
        ("applies_to item 2", "AWS Access Key"),
        ("origin", "AWS Access Key"),
        None,
    ]
    with pytest.raises(InputError) as caught:
        secrets.require_clean_fields({"--note": f"key {key}"}, "the checkpoint", private=True)
    assert caught.value.code == "prohibited_content_detected" and key not in caught.value.message
    assert caught.value.message.startswith("the checkpoint: --note line 1 holds a credential (AWS Access Key;")


def test_a_rendered_line_is_named_by_its_field() -> None:
    document = '---\nid: x\ntitle: "T"\norigin:\n  origin_key: "k"\n---\n\n# T\n\nfirst\nsecond\n'
    assert [secrets.locate(document, n) for n in (2, 3, 5, 8, 10, 11)] == [
        "id",
        "title",
        "origin",
        "title",
        "body line 1",
        "body line 2",
    ]
    assert secrets.locate("plain\ntext\n", 2) == "line 2"
