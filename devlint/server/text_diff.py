"""The one span where two versions of a text differ, found by halving (slices compare in C)."""

from __future__ import annotations


def common_prefix(a: str, b: str) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most `limit` (so that it does not overlap the prefix)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def changed_span(old: str, new: str) -> tuple[int, int, int]:
    """(start, end in old, end in new): old[start:end_old] became new[start:end_new]."""
    prefix = common_prefix(old, new)
    suffix = common_suffix(old, new, min(len(old), len(new)) - prefix)
    return prefix, len(old) - suffix, len(new) - suffix
