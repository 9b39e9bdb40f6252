"""One recorded GPU command stream rendered on two Vulkan devices (here: lavapipe; elsewhere: an
NVIDIA H200), frames compared per pixel.  Recording and the lavapipe replay happen here; the
other device's frames (``nxrecomp replay FILE --out DIR`` run there) come back as a folder or a
tar file and are compared frame by frame.

    # here: record the demo (and the horizon gfx test program), replay each on lavapipe
    .venv/bin/python bench/gpu_nvidia_compare.py record --dir D --frames 600 --sm86 --gfx [--depth] [--mrt] [--msaa] [--no-demo]
    # here: stage what the device machine lacks (debs, cp312 wheels, proto stubs, caches,
    # the recordings, device.sh) in a git-ignored folder
    .venv/bin/python bench/gpu_nvidia_compare.py stage --dir D --carry .nvcarry
    # there (device tool: run, carry [".nvcarry"]):  bash .nvcarry/device.sh
    #   -> $OUT/NAME.h200.tar per recording, $OUT/gpu_split.txt (bench/gpu_split.py there)
    # here: compare
    .venv/bin/python bench/gpu_nvidia_compare.py compare D/demo_spirv.lavapipe demo_spirv.h200.tar \\
        [--tol 2] [--oracle gfx] [--diff-png worst.png]

Per frame: largest channel difference (0-255), mean absolute difference over all channels, pixels
whose largest channel difference exceeds the tolerance, and how many of those lie on an edge of
the reference image (a pixel whose 3x3 neighbourhood is not one colour) and how many show a colour
the reference has within 3x3 (an edge or a nearest-sampled texel boundary moved by a pixel) —
rasterisation and sampling decisions show up there, filtering and arithmetic as small
differences in interiors.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import struct
import sys
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpu_host import png  # noqa: E402
from nxrecomp.common.errors import NxError  # noqa: E402


@dataclass
class FrameDiff:
    frame: int
    identical: bool  # byte-identical RGBA
    max_diff: int  # largest |a - b| over pixels and channels
    mean_diff: float  # mean |a - b| over all pixels and channels
    over: int  # pixels whose largest channel difference exceeds the tolerance
    over_on_edges: int  # ... of which on an edge of the reference image
    over_neighbour: int  # ... of which show a colour the reference has within 3x3 (an edge or texel moved)
    bbox: tuple[int, int, int, int] | None  # y0, x0, y1, x1 (inclusive) of the pixels over tolerance


def nxrecomp(*args: str, env: dict | None = None, timeout: float = 1800) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp.app.cli", *args],
        cwd=ROOT,
        text=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
    if r.returncode != 0:
        raise NxError(f"nxrecomp {' '.join(args)} exited {r.returncode}: {(r.stdout + r.stderr).strip()[-1500:]}")


def record_demo(out: Path, frames: int, shaders: str) -> Path:
    rec = out / f"demo_{shaders}.rec"
    nxrecomp(
        "demo",
        "--frames",
        str(frames),
        "--record",
        str(rec),
        "--shaders",
        shaders,
        "--out",
        str(out / f"demo_{shaders}.run"),
        "--screenshot-every",
        "0",
    )
    return rec


def record_gfx(out: Path, frames: int) -> Path:
    """The program of tests/horizon/test_horizon_nvn.py (its frames have a numpy oracle)."""
    from examples.horizon_hello.build_exefs import build_exefs
    from recompiler.formats.pack_npdm import NpdmSpec
    from recompiler.formats.pack_romfs import pack_romfs
    from recompiler.horizon import recompile_exefs
    from tests.horizon.test_horizon_nvn import shader_files

    work = out / "gfx.build"
    exefs = build_exefs("gfx", work / "exefs", NpdmSpec(name="gfx"))
    rom = work / "rom.bin"
    rom.write_bytes(pack_romfs({**shader_files(), "/config/frames": str(frames).encode()}))
    recompile_exefs(exefs, work / "bundle", romfs=rom)
    rec = out / "gfx.rec"
    with tempfile.TemporaryDirectory(prefix="nxcmp") as run_dir:  # short: UNIX socket names
        nxrecomp("run", str(work / "bundle"), "--run-dir", run_dir, "--record", str(rec))
    return rec


def record_guest(out: Path, name: str, c_text: str, romfs_files: dict[str, bytes]) -> Path:
    """One of tests/horizon's guest programs (C source + RomFS files) recompiled and run with
    ``--record``: ``out/NAME.rec``."""
    from tests.horizon.hz_build import bundle_from_c

    bundle = bundle_from_c(c_text, romfs_files, out / f"{name}.build")
    rec = out / f"{name}.rec"
    with tempfile.TemporaryDirectory(prefix="nxcmp") as run_dir:  # short: UNIX socket names
        nxrecomp("run", str(bundle), "--run-dir", run_dir, "--record", str(rec))
    return rec


def record_depth(out: Path) -> Path:
    """tests/horizon/test_horizon_nvn_depth.py's program: depth/stencil targets and tests, cull,
    scissor, blend and channel-mask state, then the depth target through a compare sampler."""
    from cpu_host.gpu_client.shaders import compile_glsl
    from tests.horizon import test_horizon_nvn_depth as t

    return record_guest(
        out,
        "depth",
        t.c_program(),
        {
            "/shaders/z.vs": compile_glsl(t.VS, "vert"),
            "/shaders/z.fs": compile_glsl(t.FS, "frag"),
            "/shaders/shadow.vs": compile_glsl(t.SHADOW_VS, "vert"),
            "/shaders/shadow.fs": compile_glsl(t.SHADOW_FS, "frag"),
        },
    )


def record_mrt(out: Path) -> Path:
    """tests/horizon/test_horizon_nvn_mrt.py's program: a G-buffer pass into three colour targets
    (one blended through its own state), then a pass sampling all three."""
    from cpu_host.gpu_client.shaders import compile_glsl
    from tests.horizon import test_horizon_nvn_mrt as t

    return record_guest(
        out,
        "mrt",
        t.c_program(),
        {
            "/shaders/gb.vs": compile_glsl(t.GB_VS, "vert"),
            "/shaders/gb.fs": compile_glsl(t.GB_FS, "frag"),
            "/shaders/resolve.vs": compile_glsl(t.RESOLVE_VS, "vert"),
            "/shaders/resolve.fs": compile_glsl(t.RESOLVE_FS, "frag"),
        },
    )


def record_msaa(out: Path) -> Path:
    """tests/horizon/test_horizon_nvn_msaa.py's program: a triangle drawn into a 4x multisampled
    target and resolved into the window texture."""
    from cpu_host.gpu_client.shaders import compile_glsl
    from tests.horizon import test_horizon_nvn_msaa as t

    return record_guest(
        out, "msaa", t.c_program(), {"/shaders/tri.vs": compile_glsl(t.VS, "vert"), "/shaders/tri.fs": compile_glsl(t.FS, "frag")}
    )


def replay(rec: Path, out: Path) -> None:
    nxrecomp("replay", str(rec), "--out", str(out))


def frame_files(src: Path, scratch: Path) -> dict[int, Path]:
    """frame number -> PNG, from a folder or a tar file of one (any depth inside the tar)."""
    if src.is_file():
        if not tarfile.is_tarfile(src):
            raise NxError("neither a folder nor a tar file", path=str(src))
        dest = scratch / hashlib.sha256(str(src).encode()).hexdigest()[:12]
        with tarfile.open(src) as t:
            if hasattr(tarfile, "data_filter"):  # refuses absolute paths and links out of dest
                t.extractall(dest, filter="data")
            else:
                if any(
                    m.name.startswith("/") or ".." in Path(m.name).parts or not (m.isfile() or m.isdir()) for m in t.getmembers()
                ):
                    raise NxError("tar file holds links or paths outside its folder", path=str(src))
                t.extractall(dest)
        src = dest
    if not src.is_dir():
        raise NxError("no such folder", path=str(src))
    files = {}
    for p in src.rglob("frame_*.png"):
        try:
            files[int(p.stem.split("_")[1])] = p
        except ValueError:
            raise NxError("frame file name is not frame_NNNNNN.png", path=str(p)) from None
    if not files:
        raise NxError("no frame_NNNNNN.png files", path=str(src))
    return files


def read_rgba(path: Path) -> np.ndarray:
    try:
        w, h, rgba = png.decode(path.read_bytes())
        return np.asarray(rgba, np.uint8).reshape(h, w, 4)
    except (ValueError, struct.error, zlib.error) as e:
        raise NxError(f"not a readable RGBA8 PNG: {e}", path=str(path)) from None


def shifted(img: np.ndarray):
    """The 9 images of img moved by -1..1 pixels (clamped at the border): each pixel's 3x3."""
    p = np.pad(img, ((1, 1), (1, 1), (0, 0)), mode="edge")
    h, w = img.shape[:2]
    for dy in range(3):
        for dx in range(3):
            yield p[dy : dy + h, dx : dx + w]


def edges(img: np.ndarray) -> np.ndarray:
    """Pixels whose 3x3 neighbourhood holds more than one colour."""
    e = np.zeros(img.shape[:2], bool)
    for s in shifted(img):
        e |= (s != img).any(-1)
    return e


def near_neighbour(ref: np.ndarray, got: np.ndarray, tol: int) -> np.ndarray:
    """Pixels of got within tol of some colour in ref's 3x3 neighbourhood of that pixel."""
    g = got.astype(np.int16)
    m = np.zeros(ref.shape[:2], bool)
    for s in shifted(ref):
        m |= np.abs(s.astype(np.int16) - g).max(-1) <= tol
    return m


def compare(frame: int, ref: np.ndarray, got: np.ndarray, tol: int) -> FrameDiff:
    if ref.shape != got.shape:
        raise NxError(f"frame {frame}: sizes differ, {ref.shape[1]}x{ref.shape[0]} vs {got.shape[1]}x{got.shape[0]}")
    d = np.abs(ref.astype(np.int16) - got.astype(np.int16))
    px = d.max(-1)
    over = px > tol
    ys, xs = np.nonzero(over)
    bbox = (int(ys.min()), int(xs.min()), int(ys.max()), int(xs.max())) if len(ys) else None
    if not over.any():
        return FrameDiff(frame, bool((d == 0).all()), int(d.max()), float(d.mean()), 0, 0, 0, None)
    return FrameDiff(
        frame,
        False,
        int(d.max()),
        float(d.mean()),
        int(over.sum()),
        int((over & edges(ref)).sum()),
        int((over & near_neighbour(ref, got, tol)).sum()),
        bbox,
    )


def oracle(name: str, frame: int) -> np.ndarray:
    if name != "gfx":
        raise NxError(f"unknown oracle {name!r} (known: gfx)")
    from tests.horizon.test_horizon_nvn import expected_frame

    return expected_frame(frame)


def diff_image(ref: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Reference on the left, other device in the middle, |difference| x 16 on the right."""
    d = np.minimum(np.abs(ref.astype(np.int16) - got.astype(np.int16)) * 16, 255).astype(np.uint8)
    d[..., 3] = 255
    return np.concatenate([ref, got, d], axis=1)


# What the device machine (Python 3.12, NVIDIA driver, no registry) lacks.  Unpacked into /:
# the Vulkan loader and glvnd (the NVIDIA ICD, libGLX_nvidia, needs libGLdispatch from glvnd;
# with the loader alone vkCreateInstance fails with VK_ERROR_INCOMPATIBLE_DRIVER).  Unpacked
# beside, on PATH/LD_LIBRARY_PATH: spirv-val (gpu_host validates every program with it),
# glslangValidator (bench/gpu_split.py's GLSL, cached) and a few X libraries.
DEBS_ROOT = ["libvulkan1", "libegl1", "libglvnd0", "libopengl0", "libgl1", "libglx0", "libgles2"]
DEBS_SIDE = ["spirv-tools", "glslang-tools", "libx11-6", "libxcb1", "libxau6", "libxdmcp6", "libxext6", "libbsd0", "libmd0"]
WHEELS = ["vulkan", "cffi", "pycparser", "msgpack", "grpcio", "grpcio-health-checking", "protobuf"]
PLATFORMS = [
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_24_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
]

DEVICE_SH = r"""# Written by bench/gpu_nvidia_compare.py stage; runs on the device machine from the repo root.
# Env: SKIP_GOB=1, SKIP_PIPELINES=1, SKIP_REPLAY=1, SKIP_SPLIT=1, SPLIT_RUNS (1), SPLIT_FRAMES (11).
C=$(cd "$(dirname "$0")" && pwd); R=$PWD
for f in $C/deb/root/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/side; for f in $C/deb/*.deb; do dpkg -x $f /tmp/side; done
export PATH=/tmp/side/usr/bin:$PATH LD_LIBRARY_PATH=/tmp/side/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $C/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$R PYTHONUNBUFFERED=1 NXRECOMP_NXRECOMP_CACHE_DIR=/tmp/nxcache
rm -rf /tmp/nxcache; cp -r $C/cache /tmp/nxcache; cp $C/proto/*_pb2*.py proto/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
probe='from gpu_host.vkdevice import Device
import vulkan as vk
d = Device(); l = vk.vkGetPhysicalDeviceProperties(d.pd).limits
print("vulkan device:", d.name, "subPixelPrecisionBits", l.subPixelPrecisionBits, "subTexelPrecisionBits",
      l.subTexelPrecisionBits, "mipmapPrecisionBits", l.mipmapPrecisionBits); d.close()'
python3 -c "$probe" || { export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; python3 -c "$probe" || exit 1; }
[ "${SKIP_GOB:-}" ] || timeout 120 python3 bench/gpu_gob_nvidia.py --out $OUT/gob.json || echo "GOB CHECK FAILED"
[ "${SKIP_PIPELINES:-}" ] || timeout 300 python3 bench/gpu_pipelines.py --programs 12 2>&1 | tee $OUT/gpu_pipelines.txt
mkdir -p /tmp/fr
for r in $C/rec/*.rec; do
  [ "${SKIP_REPLAY:-}" ] && break
  n=$(basename $r .rec); t=$SECONDS
  python3 -m nxrecomp.app.cli replay $r --out /tmp/fr/$n.h200 || echo "REPLAY FAILED: $n"
  echo "$n: replayed in $((SECONDS - t)) s"
  (cd /tmp/fr && tar cf $OUT/$n.h200.tar $n.h200)
done
[ "${SKIP_SPLIT:-}" ] && exit 0
for i in $(seq ${SPLIT_RUNS:-1}); do
  timeout 200 python3 bench/gpu_split.py --frames ${SPLIT_FRAMES:-11} 2>&1 | tee -a $OUT/gpu_split.txt
done
"""


def run_ok(cmd: list[str], cwd: Path, what: str) -> None:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise NxError(f"{what} failed: {(r.stdout + r.stderr).strip()[-800:]}")


def cmd_stage(a: argparse.Namespace) -> None:
    """Fill the carry folder: debs, cp312 wheels of this venv's versions, proto stubs, the caches
    the device cannot build (GLSL -> SPIR-V, the texture decoder), the recordings, device.sh."""
    import importlib.metadata
    import shutil

    from cpu_host.gpu_client.shaders import GlslSource
    from gpu_host import texdecode
    from nxrecomp.common import settings

    src, carry = Path(a.dir).resolve(), Path(a.carry).resolve()
    recs = sorted(src.glob("*.rec"))
    if not recs:
        raise NxError("no recordings (NAME.rec): run the record step first", path=str(src))
    shutil.rmtree(carry, ignore_errors=True)
    for sub in ("deb/root", "whl", "proto", "cache/glsl", "cache/gpu_host", "rec"):
        (carry / sub).mkdir(parents=True)
    run_ok(["apt-get", "download", *DEBS_ROOT], carry / "deb" / "root", "apt-get download")
    run_ok(["apt-get", "download", *DEBS_SIDE], carry / "deb", "apt-get download")
    plat = [x for p in PLATFORMS for x in ("--platform", p)]
    pins = [f"{w}=={importlib.metadata.version(w)}" for w in WHEELS]
    run_ok(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.12",
            "--implementation",
            "cp",
            *plat,
            "-d",
            str(carry / "whl"),
            *pins,
        ],
        ROOT,
        "pip download",
    )
    with tempfile.TemporaryDirectory() as d:  # stubs of the .proto files as they are now
        (Path(d) / "proto").mkdir()
        for f in [*(ROOT / "proto").glob("*.proto"), ROOT / "proto" / "gen.py", ROOT / "proto" / "__init__.py"]:
            shutil.copy(f, Path(d) / "proto")
        run_ok([sys.executable, "-m", "proto.gen"], Path(d), "proto.gen")
        for f in (Path(d) / "proto").glob("*_pb2*.py"):
            shutil.copy(f, carry / "proto")
    sys.path.insert(0, str(ROOT / "tests" / "gpu_host"))
    from gpu_guest import COLOR_FS, COLOR_VS

    GlslSource(COLOR_VS, COLOR_FS).spirv()  # make sure gpu_split's shaders are cached
    cache = Path(settings.get("nxrecomp", "cache_dir"))
    for f in (cache / "glsl").glob("*.spv"):
        shutil.copy(f, carry / "cache" / "glsl")
    shutil.copy(texdecode._build(), carry / "cache" / "gpu_host")
    for r in recs:
        shutil.copy(r, carry / "rec")
    (carry / "device.sh").write_text(DEVICE_SH)
    size = sum(f.stat().st_size for f in carry.rglob("*") if f.is_file())
    print(
        f"staged {len(recs)} recordings and the device's needs in {carry}: {size / 2**20:.1f} MiB "
        f"(the device tool carries at most 64 MiB with the working tree)"
    )


def cmd_record(a: argparse.Namespace) -> None:
    out = Path(a.dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    recs = [] if a.no_demo else [record_demo(out, a.frames, "spirv")]
    if a.sm86:
        recs.append(record_demo(out, a.frames, "sm86"))
    if a.sm53:
        recs.append(record_demo(out, a.frames, "sm53"))
    if a.gfx:
        recs.append(record_gfx(out, a.gfx_frames))
    if a.depth:
        recs.append(record_depth(out))
    if a.mrt:
        recs.append(record_mrt(out))
    if a.msaa:
        recs.append(record_msaa(out))
    for rec in recs:
        replay(rec, out / rec.name.replace(".rec", ".lavapipe"))
        print(
            f"{rec}  ({rec.stat().st_size / 2**20:.1f} MiB) -> lavapipe frames in {out / rec.name.replace('.rec', '.lavapipe')}"
        )


def cmd_compare(a: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        ref = frame_files(Path(a.ref), Path(scratch))
        other = frame_files(Path(a.other), Path(scratch))
        if set(ref) != set(other):
            only_r, only_o = sorted(set(ref) - set(other)), sorted(set(other) - set(ref))
            raise NxError(f"frame sets differ: only in {a.ref}: {only_r[:10]}, only in {a.other}: {only_o[:10]}")
        diffs, worst = [], None
        print(f"{'frame':>6} {'max':>4} {'mean':>8} {f'>{a.tol}':>7} {'on edges':>8} {'3x3 colour':>10}  bbox (y0,x0,y1,x1)")
        for f in sorted(ref):
            r, g = read_rgba(ref[f]), read_rgba(other[f])
            fd = compare(f, r, g, a.tol)
            diffs.append(fd)
            if worst is None or (fd.over, fd.max_diff) > (worst[0].over, worst[0].max_diff):
                worst = (fd, r, g)
            if not fd.identical or a.all:
                print(
                    f"{f:6d} {fd.max_diff:4d} {fd.mean_diff:8.4f} {fd.over:7d} {fd.over_on_edges:8d} "
                    f"{fd.over_neighbour:10d}  {fd.bbox}"
                )
            if a.oracle:
                want = oracle(a.oracle, f)
                for label, img in (("ref", r), ("other", g)):
                    od = compare(f, want, img, a.tol)
                    if od.over:
                        print(f"{'':6} oracle vs {label}: max {od.max_diff}, {od.over} pixels over {a.tol}, bbox {od.bbox}")
        n = len(diffs)
        ident = sum(d.identical for d in diffs)
        within = sum(d.over == 0 for d in diffs)
        print(
            f"\n{n} frames ({ref[min(ref)].parent} vs {other[min(other)].parent}): {ident} byte-identical, "
            f"{within} within tolerance {a.tol}; max difference {max(d.max_diff for d in diffs)}, "
            f"mean difference {sum(d.mean_diff for d in diffs) / n:.5f}, pixels over tolerance "
            f"{sum(d.over for d in diffs)} in all (on edges {sum(d.over_on_edges for d in diffs)}; showing a colour "
            f"the reference has within 3x3 {sum(d.over_neighbour for d in diffs)}), "
            f"most in one frame {max(d.over for d in diffs)}"
        )
        if a.reference:  # the demo test's own rule (tests/demo/test_demo.py close_to_reference)
            sys.path.insert(0, str(ROOT / "tests" / "demo"))
            from test_demo import close_to_reference

            for ref_png in sorted(Path(a.reference).glob("frame_*.png")):
                f = int(ref_png.stem.split("_")[1])
                if f in other:
                    ok, why = close_to_reference(read_rgba(other[f]), read_rgba(ref_png))
                    print(f"reference picture {ref_png.name}: {'within' if ok else 'OUTSIDE'} the demo test's tolerance ({why})")
        if a.diff_png and worst is not None:
            img = diff_image(worst[1], worst[2])
            tmp = Path(a.diff_png).with_suffix(".tmp")
            tmp.write_bytes(png.encode(img.tobytes(), img.shape[1], img.shape[0]))
            os.replace(tmp, a.diff_png)
            print(f"worst frame {worst[0].frame}: reference | other | difference x16 -> {a.diff_png}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="record the demo (and the gfx test program) and replay each on lavapipe")
    r.add_argument("--dir", required=True, help="folder for NAME.rec and NAME.lavapipe/")
    r.add_argument("--frames", type=int, default=600, help="demo frames (600: the whole scripted tour)")
    r.add_argument("--sm86", action="store_true", help="also record the demo with SM86 shaders (translated)")
    r.add_argument("--sm53", action="store_true", help="also record the Switch 1 build of the demo (SM53 shaders, Maxwell GOBs)")
    r.add_argument("--gfx", action="store_true", help="also record tests/horizon's gfx program")
    r.add_argument("--gfx-frames", type=int, default=120)
    r.add_argument("--depth", action="store_true", help="also record tests/horizon's depth/stencil/blend program")
    r.add_argument("--mrt", action="store_true", help="also record tests/horizon's multiple-render-target program")
    r.add_argument("--msaa", action="store_true", help="also record tests/horizon's 4x multisampled program")
    r.add_argument("--no-demo", action="store_true", help="leave out the demo (its SPIR-V build is recorded by default)")
    r.set_defaults(func=cmd_record)
    st = sub.add_parser("stage", help="fill a git-ignored carry folder for the device machine")
    st.add_argument("--dir", required=True, help="the record step's folder (its NAME.rec files are carried)")
    st.add_argument("--carry", default=str(ROOT / ".nvcarry"), help="carry folder (.nvcarry, git-ignored)")
    st.set_defaults(func=cmd_stage)
    c = sub.add_parser("compare", help="compare two frame folders (or tar files) per pixel")
    c.add_argument("ref", help="reference frames (e.g. lavapipe's)")
    c.add_argument("other", help="the other device's frames")
    c.add_argument("--tol", type=int, default=2, help="a pixel differs when a channel differs by more (2)")
    c.add_argument("--all", action="store_true", help="print identical frames too")
    c.add_argument(
        "--reference",
        help="also check the other frames against the demo's reference pictures "
        "(tests/demo/reference) with the demo test's tolerance",
    )
    c.add_argument("--oracle", help="also compare both with an independent expectation (gfx)")
    c.add_argument("--diff-png", help="write the worst frame as reference | other | difference x16")
    c.set_defaults(func=cmd_compare)
    a = ap.parse_args(argv)
    try:
        a.func(a)
    except NxError as e:
        print(f"gpu_nvidia_compare: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
