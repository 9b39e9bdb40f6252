"""nx-hbloader (inside the nton forwarders, built by others) through the kernel's in-process
sessions: it creates a session to itself, serves it on a second thread (whose stack it maps from
its .bss), and sends a request copying the pseudo-handle 0xFFFF8001, which the kernel must turn
into a real process handle; with that handle it maps the NRO it chain-loads
(``svcMapProcessCodeMemory``, 0x77: code unseen at build time, where a static recompiler stops).

Facts: nx-hbloader's ``getOwnProcessHandle`` / ``loadNro`` (the fatal codes: module 347 =
Module_HomebrewLoader, 3 = the NRO could not be opened, 12/10/13/15/17 = session, thread and
receive failures); switchbrew's NRO page (header at 0x10: magic ``NRO0``, image size at 0x18, bss
size at 0x38); switchbrew's SVC page (MapProcessCodeMemory: W0 process handle, X1 dst, X2 src,
X3 size).  The NRO chain-loaded here is nx.js's (npm ``@nx.js/nro``), from the corpus cache."""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.horizon.hb_corpus import CORPUS, CorpusUnavailable, fetch
from tests.horizon.hz_build import ROOT

pytestmark = pytest.mark.network


def _get(name: str) -> Path:
    hb = next(h for h in CORPUS if h.name == name)
    try:
        return fetch(hb)
    except CorpusUnavailable as e:
        pytest.skip(f"HOMEBREW CORPUS UNAVAILABLE: {name} ({hb.registry} {hb.package}=={hb.version}): {e}")


@pytest.mark.parametrize("forwarder", ["nton-1.0.1-forwarder", "nton-3.0.1-forwarder"])
def test_hbloader_gets_its_process_handle(forwarder: str, tmp_path: Path) -> None:
    from recompiler.horizon import recompile_exefs

    exefs = _get(forwarder)
    nro = _get("nxjs-0.0.36-nro").read_bytes()
    assert nro[0x10:0x14] == b"NRO0"
    image_size, bss_size = struct.unpack_from("<I", nro, 0x18)[0], struct.unpack_from("<I", nro, 0x38)[0]
    recompile_exefs(exefs, tmp_path / "bundle")
    sd = tmp_path / "sd"
    sd.mkdir()
    env = {**os.environ, "NXRECOMP_CPU_HOST_SD_DIR": str(sd)}
    cmd = [sys.executable, "-m", "nxrecomp", "hz-run", str(tmp_path / "bundle")]

    # without an NRO: hbloader got past its session (else a fatal 347-12/10/13/15/17) and fails to open it
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert "with result 0x75b (module 347, description 3)" in r.stderr, r.stderr[-2000:]

    # with one: it reads it (fsp-srv) and maps it into itself with the process handle it got
    (sd / "hbmenu.nro").write_bytes(nro)
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert "guest crash: SVC 0x77, which the kernel does not serve" in r.stderr, r.stderr[-2000:]
    regs = dict(re.findall(r"\b(x\d+)\s+([0-9a-f]{16})", r.stderr))
    handle, size = int(regs["x0"], 16), int(regs["x3"], 16)
    assert handle not in (0, 0xFFFF8000, 0xFFFF8001) and handle < 1 << 32, hex(handle)   # a real handle
    assert size == (image_size + bss_size + 0xFFF) & ~0xFFF, (hex(size), hex(image_size), hex(bss_size))
