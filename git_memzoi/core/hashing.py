"""Content identity with BLAKE3 (the one module that hashes)."""

from __future__ import annotations


def content_hash(data: bytes) -> str:
    """Return ``blake3:<64 hex>`` for ``data`` (bytes, hashed as given, no normalisation)."""
    from blake3 import blake3

    return "blake3:" + blake3(data).hexdigest()


def short_hash(data: bytes, length: int = 16) -> str:
    """Return the first ``length`` hex digits of the BLAKE3 digest of ``data`` (for cache keys)."""
    from blake3 import blake3

    return blake3(data).hexdigest()[:length]
