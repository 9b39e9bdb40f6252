"""Bit fields of an instruction word (any width: SM53's 64-bit words, SM86's 128-bit ones)."""

from __future__ import annotations


def get(word: int, lo: int, width: int) -> int:
    """The ``width``-bit field at bit ``lo``."""
    return (word >> lo) & ((1 << width) - 1)


def put(word: int, lo: int, width: int, value: int) -> int:
    """``word`` with the ``width``-bit field at ``lo`` replaced by ``value`` (truncated)."""
    mask = ((1 << width) - 1) << lo
    return (word & ~mask) | ((value << lo) & mask)


def sext(v: int, width: int) -> int:
    """``v`` read as a ``width``-bit two's-complement number."""
    return v - (1 << width) if v >> (width - 1) & 1 else v
