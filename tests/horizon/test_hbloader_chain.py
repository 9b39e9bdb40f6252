"""nx-hbloader (inside the nton forwarders, built by others) loading NROs through its real path:
it gets a handle to its own process through a session to itself (a second thread serves it, a
copied 0xFFFF8001 becomes a real handle), reads the NRO named by its RomFS's ``nextNroPath``
(the forwarder convention) into its heap, maps it with ``svcMapProcessCodeMemory`` (0x77) at a
random address, sets the segments' permissions (``svcSetProcessMemoryPermission``, 0x73) and
jumps to it: code no build saw, lifted when first branched to (``cpu_host/horizon/loaded_code.py``
through lift on miss).  When the NRO returns, hbloader unmaps it (``svcUnmapProcessCodeMemory``,
0x78, per segment) and loads the next one, passing the last one's exit code on.

The NROs are ours (``hb_guest/``, laid out as elf2nro lays out libnx's: every segment a whole
number of pages, as hbloader's page-granular permission calls need); the loader is the
forwarder's.  ``chain.nro`` prints the loader configuration hbloader gave it (its own notice text
ends the list), asks for ``last.nro`` next through the NextLoadPath entry's buffers (what
libnx's ``envSetNextLoad`` writes) and returns 42; ``last.nro`` prints its configuration (the
last load result is 42) and spins in ``b .``, which ends the process with the watchdog's notice.

Facts: nx-hbloader's ``loadNro`` (fatal codes: module 347 = Module_HomebrewLoader, 3 = the NRO
could not be opened, 18/19/20/21 = map and permission failures, 24/25/26 = unmap failures);
libnx ``env.h`` (loader config keys: 2 NextLoadPath, 5 Argv, 10 ProcessHandle, 11
LastLoadResult); switchbrew's NRO page (header at 0x10: magic ``NRO0``, image size at 0x18, bss
size at 0x38) and SVC page.  Before 0x77/0x78/0x73 were served, the run stopped at SVC 0x77.
(Without any NRO the forwarders stop at hbloader's fatal 347-3: test_homebrew_corpus.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from recompiler.formats.pack_elf import split_elf
from recompiler.formats.pack_nro import pack_nro
from recompiler.formats.pack_romfs import pack_romfs
from tests.horizon.hb_corpus import CORPUS, CorpusUnavailable, fetch
from tests.horizon.hz_build import ROOT
from tests.horizon.test_homebrew_abi import _guest

pytestmark = pytest.mark.network

PAGE = 0x1000
LOADED = re.compile(r"nxrecomp: lifted at run time: code loaded at (0x[0-9a-f]+), from the function at (0x[0-9a-f]+)")


def _get(name: str) -> Path:
    hb = next(h for h in CORPUS if h.name == name)
    try:
        return fetch(hb)
    except CorpusUnavailable as e:
        pytest.skip(f"HOMEBREW CORPUS UNAVAILABLE: {name} ({hb.registry} {hb.package}=={hb.version}): {e}")


def paged_nro(elf: bytes) -> bytes:
    """An NRO of ``elf`` with every segment padded to whole pages (elf2nro's layout: the nx.js
    releases' headers show it), the bss shortened by what the data's padding took."""
    e = split_elf(elf)
    pad = lambda b: b + bytes(-len(b) % PAGE)  # noqa: E731
    data = pad(e.data)
    bss = max(0, -(-(len(e.data) + e.bss_size) // PAGE) * PAGE - len(data))
    return pack_nro(
        pad(e.text),
        pad(e.rodata),
        data,
        bss_size=bss,
        build_id=e.build_id,
        mem_offsets=e.mem_offsets,
        dynstr=e.dynstr,
        dynsym=e.dynsym,
    )


@pytest.fixture(scope="module")
def nros(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = {}
    for name, crt0 in (("chain", "crt0.s"), ("last", "crt0_spin.s")):
        work = tmp_path_factory.mktemp(name)
        out[name] = paged_nro(_guest(work, crt0))
    return out


def _run(bundle: Path, sd: Path, deterministic: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "NXRECOMP_CPU_HOST_SD_DIR": str(sd)}
    env.pop("NXRECOMP_CPU_HOST_DETERMINISTIC", None)
    if deterministic:  # RandomEntropy fixed: the same load addresses each run, lifted objects cached
        env["NXRECOMP_CPU_HOST_DETERMINISTIC"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )


def _config(block: str) -> dict[str, str]:
    return dict(m.groups() for m in re.finditer(r"^(\w[\w ]*?) (0x[0-9a-f]{16}|sdmc:\S+)$", block, re.M))


@pytest.mark.parametrize("forwarder,version", [("nton-1.0.1-forwarder", "v2.4.1"), ("nton-3.0.1-forwarder", "v2.4.5")])
def test_forwarder_loads_and_runs_nros_through_map_process_code_memory(
    forwarder: str, version: str, nros: dict[str, bytes], tmp_path: Path
) -> None:
    from recompiler.horizon import recompile_exefs

    rom = tmp_path / "rom.bin"
    rom.write_bytes(pack_romfs({"nextNroPath": b"sdmc:/switch/chain.nro", "nextArgv": b"sdmc:/switch/chain.nro"}))
    recompile_exefs(_get(forwarder), tmp_path / "bundle", romfs=rom)
    sd = tmp_path / "sd"
    (sd / "switch").mkdir(parents=True)
    for name, data in nros.items():
        (sd / "switch" / f"{name}.nro").write_bytes(data)

    r = _run(tmp_path / "bundle", sd)
    assert r.returncode == 0, r.stderr[-3000:]
    # two programs ran, in order, each from the start of its own block of output
    blocks = r.stdout.split("form nro\n")
    assert len(blocks) == 3 and blocks[0] == "", r.stdout[-3000:]
    first, second = _config(blocks[1]), _config(blocks[2])
    assert first["argv"] == "sdmc:/switch/chain.nro" and second["argv"] == "sdmc:/switch/last.nro", r.stdout
    # hbloader's own entries: a real handle to the process (not the pseudo-handle), the main
    # thread, the last load's result (none before the first; the first's exit code 42 after it)
    for cfg in (first, second):
        handle = int(cfg["process handle"], 16)
        assert handle not in (0, 0xFFFF8000, 0xFFFF8001) and handle < 1 << 32, cfg
        assert int(cfg["main thread handle"], 16) != 0, cfg
    assert int(first["last load result"], 16) == 0 and int(second["last load result"], 16) == 42, r.stdout
    assert f"end of list: nx-hbloader {version}" in blocks[1], blocks[1]
    assert "next load sdmc:/switch/last.nro" in blocks[1] and "next load" not in blocks[2], r.stdout
    # its crt0 relocated itself at the address it was loaded to: the pointers print right
    for b in blocks[1:]:
        assert "relocated pointer ok\npointer ok\n" in b, b
    # each NRO was lifted when first branched to, at its entry, at an address of its own
    loads = LOADED.findall(r.stderr)
    assert len(loads) == 2 and all(base == entry for base, entry in loads), r.stderr[-3000:]
    assert loads[0][0] != loads[1][0], loads
    # chain.nro's pages went back when it returned (all its pieces: one notice); last.nro never returns
    assert re.findall(r"the code mapped at (0x[0-9a-f]+) \(0x[0-9a-f]+ bytes\) was unmapped", r.stderr) == [loads[0][0]], (
        r.stderr[-3000:]
    )
    assert "every guest thread is parked in an endless branch-to-self" in r.stderr, r.stderr[-2000:]

    # again: the same random addresses (RandomEntropy fixed), the objects come from the cache
    again = _run(tmp_path / "bundle", sd)
    assert again.returncode == 0 and again.stdout == r.stdout, again.stderr[-3000:]
    assert LOADED.findall(again.stderr) == loads and again.stderr.count("(cached object)") == 2, again.stderr[-3000:]
