"""Fuzzing every loader with hypothesis: mutations and truncations of valid files must load or
raise NxError (never another exception), and each case must finish within a time bound
(cyclic tables, huge sizes and counts must not hang).  CI runs a few hundred cases; the heavy
run (``-m heavy``) thousands."""

from __future__ import annotations

import functools
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.formats import fmt_fieldwise as F
from nxrecomp.common.errors import NxError
from recompiler.formats.describe import describe
from recompiler.formats.detect import load_bytes
from recompiler.formats.pack_nacp import pack_nacp
from recompiler.formats.pack_npdm import NpdmSpec, kc_memory_map, kc_thread_info, pack_npdm
from recompiler.formats.pack_nro import NroAssets, pack_nro
from recompiler.formats.pack_nso import pack_nso
from recompiler.formats.pack_pfs0 import pack_pfs0
from recompiler.formats.pack_romfs import pack_romfs
from recompiler.formats.pfs0 import Pfs0
from recompiler.formats.romfs import Romfs

CASE_SECONDS = 5.0  # generous: CI shares 2 cores; a hang would take far longer
INTERESTING = [0, 1, 4, 0x10, 0x18, 0x100, 0x1000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFF0, 0xFFFFFFFF]


@functools.lru_cache(maxsize=None)
def seeds(fmt: str) -> tuple[bytes, ...]:
    text, ro, data, bss = F.module_image()
    if fmt == "nso":
        return (
            F.nso_file(text, ro, data, bss, flags=0, compress=(True, True, True)),
            pack_nso(text, ro, data, bss_size=bss, compress=(True, False, True)),
            F.nso_file(
                *F.module_image(with_mod0=False),
                flags=0x3F,
                compress=(True, True, False),
                dynsym=(0, 96),
                dynstr=(0x100, len(F.STRTAB)),
            ),
        )
    if fmt == "nro":
        return (
            F.nro_file(text, ro, data, bss, assets=None),
            pack_nro(text, ro, data, bss_size=bss, assets=NroAssets(b"icon", pack_nacp("Fuzz", "Me", "1.0"), F.small_romfs())),
        )
    if fmt == "npdm":
        return (
            F.npdm_file(flags=0b0111),
            pack_npdm(NpdmSpec(kernel_caps=kc_thread_info(59, 28, 0, 2) + kc_memory_map(0x1000, 0x2000))),
        )
    if fmt == "pfs0":
        return (
            F.pfs0_file([("main", b"abcd"), ("main.npdm", b"xy")]),
            pack_pfs0({"main": text[:64], "sdk": b"s", "subsdk0": b""}),
        )
    if fmt == "romfs":
        return (F.small_romfs(), pack_romfs({"/a/b/c.bin": b"1" * 40, "/a/d": b"22", "/e": b"", "/f/g/h": b"h"}))
    raise ValueError(fmt)


def exercise(fmt: str, blob: bytes) -> None:
    """Load, then use the result the way the CLI and the linker do."""
    obj = load_bytes(blob, "fuzz.bin", fmt)
    describe(obj, symbols=True, relocs=True)
    if isinstance(obj, Romfs):
        for path, _ in obj.list_files():
            obj.read(path)
            try:
                obj.read(path + "x")
            except KeyError:
                pass
    elif isinstance(obj, Pfs0):
        for name in obj.names():
            obj.read(name)


mutation = st.tuples(
    st.sampled_from(["byte", "u32", "u64", "zero", "truncate", "insert"]),
    st.integers(0, 1 << 20),
    st.integers(0, (1 << 64) - 1),
    st.booleans(),
)


def mutate(blob: bytes, muts: list[tuple[str, int, int, bool]]) -> bytes:
    b = bytearray(blob)
    for kind, pos, val, pick in muts:
        if not b:
            break
        # Header fields are where loaders are most exposed: aim half the hits at the first 0x400 bytes.
        p = pos % min(len(b), 0x400) if pick else pos % len(b)
        if kind == "byte":
            b[p] = val & 0xFF
        elif kind in ("u32", "u64"):
            n = 4 if kind == "u32" else 8
            v = INTERESTING[val % len(INTERESTING)] if pick else val
            p &= ~3
            b[p : p + n] = (v % (1 << (8 * n))).to_bytes(n, "little")
        elif kind == "zero":
            b[p : p + 16] = bytes(len(b[p : p + 16]))
        elif kind == "truncate":
            del b[p:]
        else:
            b[p:p] = (val & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(b)


def run_fuzz(fmt: str, examples: int) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.integers(0, 10), st.lists(mutation, min_size=1, max_size=6))
    def case(seed_index: int, muts) -> None:
        pool = seeds(fmt)
        blob = mutate(pool[seed_index % len(pool)], muts)
        t0 = time.monotonic()
        try:
            exercise(fmt, blob)
        except NxError as e:
            assert str(e)  # a message, naming the file
            assert "fuzz.bin" in str(e)
        assert time.monotonic() - t0 < CASE_SECONDS

    case()


FORMATS = ["nso", "nro", "npdm", "pfs0", "romfs"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_seeds_are_valid(fmt: str) -> None:
    for blob in seeds(fmt):
        exercise(fmt, blob)


@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzz(fmt: str) -> None:
    run_fuzz(fmt, 80)


@pytest.mark.heavy
@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzz_heavy(fmt: str) -> None:
    run_fuzz(fmt, 4000)
