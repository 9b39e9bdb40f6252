"""epoll in the Linux personality (Go's network poller waits on files too): the event struct is
16 bytes on arm64 and 12 (packed) on x86-64, so epoll_ctl's event and epoll_pwait's array are
converted.  ``programs/epoll.c`` against qemu-aarch64."""

from __future__ import annotations

import subprocess

from tests.cpu_host import aarch64_programs


def test_epoll_matches_qemu(tmp_path) -> None:
    program = aarch64_programs.build_for_qemu("epoll", tmp_path)
    bundle = aarch64_programs.recompile(program, tmp_path / "bundle")
    ref = subprocess.run(["qemu-aarch64", str(program)], capture_output=True, text=True, timeout=120)
    assert ref.returncode == 0 and "xor 0x8888888888888888" in ref.stdout, ref.stdout + ref.stderr
    ours = subprocess.run([str(bundle / "nxrun"), "epoll"], capture_output=True, text=True, timeout=120)
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr)
