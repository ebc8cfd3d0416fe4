"""git's rename similarity index of two blobs, computed as diffcore-delta.c does (pure), so a rendered diff's
``similarity index`` lines match git's byte for byte."""

from __future__ import annotations


def git_similarity(src: bytes, dst: bytes) -> int:
    """git's rename ``similarity index`` (percent) of two blobs: the bytes of ``src`` found in ``dst``, counted
    in git's spans (a line, or 64 bytes; CR of CRLF skipped in text), over the larger size (diffcore-delta.c).
    """
    if not src and not dst:
        return 100
    ours, theirs = _spans(src), _spans(dst)
    copied = sum(min(count, theirs[h]) for h, count in ours.items() if h in theirs)
    score = copied * 60000 // max(len(src), len(dst))
    return min(score, 60000) * 100 // 60000


def _spans(data: bytes) -> dict[int, int]:
    text = b"\0" not in data[:8000]
    mask = 0xFFFFFFFF
    counts: dict[int, int] = {}
    accum1 = accum2 = n = 0
    last = len(data) - 1
    for i, c in enumerate(data):
        if text and c == 13 and i < last and data[i + 1] == 10:
            continue
        old1 = accum1
        accum1 = (((accum1 << 7) ^ (accum2 >> 25)) + c) & mask
        accum2 = ((accum2 << 7) ^ (old1 >> 25)) & mask
        n += 1
        if n < 64 and c != 10:
            continue
        h = ((accum1 + accum2 * 0x61) & mask) % 107927
        counts[h] = counts.get(h, 0) + n
        n = accum1 = accum2 = 0
    if n:
        h = ((accum1 + accum2 * 0x61) & mask) % 107927
        counts[h] = counts.get(h, 0) + n
    return counts
