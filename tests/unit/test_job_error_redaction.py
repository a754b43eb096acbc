"""A job that raised is stored as its exception text with every active judge's key redacted (the store's own
guarantee, beside the client's)."""

from __future__ import annotations

from metaeval.pipeline.store_views import job_error

KEY = "sk-test-0123456789abcdefghijklmnop"


def test_key_and_fragments_are_redacted():
    exc = RuntimeError(f"upstream said: bad key {KEY}; retry with {KEY[5:20]} ...")
    text = job_error(exc, [KEY])
    assert text.startswith("RuntimeError: upstream said")
    assert KEY not in text and KEY[5:20] not in text and "[REDACTED]" in text
    assert not any(KEY[i:i + 8] in text for i in range(len(KEY) - 7))


def test_without_secrets_the_text_is_kept():
    assert job_error(ValueError("plain failure"), []) == "ValueError: plain failure"
