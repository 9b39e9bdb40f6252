"""PTX's scalar video instructions on a real NVIDIA GPU (issue 31, shader-video): what the
hardware computes for the corpus's video kernels (tests/shader_svc/cuda_corpus_video.py) and for
a probe of ~1,400 more forms, against the PTX ISA's definition (``ref_one``), the model of
ptxas's emulation (``ref_emulated``) and our SM86 translation on lavapipe; and a handful of
corpus programs' translations run on the NVIDIA Vulkan driver.

No GPU since Volta has video instructions: ptxas emulates them (sm_86, sm_90 alike) with PRMT,
IADD3, IMAD.WIDE, SHF, ISETP and SEL.  An H100 (sm_90) cannot run sm_86 code, so the device
runs the same PTX assembled for sm_90, and the SASS of both is compared here (nvdisasm).

    # here: build what the device needs into a git-ignored carry folder
    .venv/bin/python bench/video_nvidia.py stage --carry .nvcarry
    # there (device tool: run, carry [".nvcarry"]): bash .nvcarry/device.sh  -> $OUT/*.npz, logs
    # here: compare (DIR: the files that came back)
    .venv/bin/python bench/video_nvidia.py compare --carry .nvcarry --got DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "shader_svc"))

BLOCK = 64
CHUNK = 40  # probe specs per kernel


def probe_specs() -> list[dict]:
    """Forms beyond the corpus: every arithmetic op, shift, comparison and vmad variant with and
    without .sat, under each secondary operation and each merge."""
    from cuda_corpus_video import _S

    tails = [{}, {"op2": "add"}, {"op2": "min"}, {"op2": "max"}] + [{"dsel": d} for d in ("b0", "b1", "b2", "b3", "h0", "h1")]
    sels = [("b1", "b3"), (None, None), ("h1", "h0"), ("b0", "h1")]
    out = []
    j = 0
    for op in ("vadd", "vsub", "vabsdiff", "vmin", "vmax"):
        for dt in ("u32", "s32"):
            for at, bt in (("u32", "u32"), ("s32", "s32"), ("s32", "u32"), ("u32", "s32")):
                for sat in (False, True):
                    for t in tails:
                        asel, bsel = sels[j % len(sels)]
                        j += 1
                        out.append(_S(op, dt=dt, at=at, bt=bt, asel=asel, bsel=bsel, sat=sat, **t))
    for op in ("vshl", "vshr"):
        for dt in ("u32", "s32"):
            for at in ("u32", "s32"):
                for mode in ("clamp", "wrap"):
                    for sat in (False, True):
                        for t in tails:
                            asel, bsel = sels[j % len(sels)]
                            j += 1
                            out.append(
                                _S(op, dt=dt, at=at, asel=asel, bsel=bsel if bsel != "h1" else "b0", sat=sat, mode=mode, **t)
                            )
    for at, bt in (("u32", "u32"), ("s32", "s32"), ("s32", "u32"), ("u32", "s32")):
        for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
            for t in tails:
                asel, bsel = sels[j % len(sels)]
                j += 1
                out.append(_S("vset", at=at, bt=bt, cmp=cmp, asel=asel, bsel=bsel, **t))
    for dt in ("u32", "s32"):
        for at, bt in (("u32", "u32"), ("s32", "s32"), ("s32", "u32"), ("u32", "s32")):
            for neg in ({}, {"na": True}, {"nb": True}, {"nc": True}, {"na": True, "nb": True}, {"po": True}):
                for sat in (False, True):
                    for scale in (None, "shr7", "shr15"):
                        asel, bsel = sels[j % len(sels)]
                        j += 1
                        out.append(_S("vmad", dt=dt, at=at, bt=bt, asel=asel, bsel=bsel, sat=sat, scale=scale, **neg))
    return [{k: v for k, v in s.items() if v not in (None, False)} for s in out]


def kernels() -> dict[str, list[dict]]:
    """{kernel name: its specs}: the corpus's video kernels, then the probe in chunks."""
    from cuda_corpus_video import SPECS

    out = dict(SPECS)
    p = probe_specs()
    for i in range(0, len(p), CHUNK):
        out[f"video_probe{i // CHUNK:02d}"] = p[i : i + CHUNK]
    return out


def source(ks: dict[str, list[dict]]) -> str:
    import cuda_corpus
    from cuda_corpus_video import _src

    return cuda_corpus.HEADER + "\n".join(_src(n, s) for n, s in ks.items()) + "\n"


def inputs() -> tuple[np.ndarray, np.ndarray]:
    """The corpus's inputs (seed 1, as cuda_corpus.run): a, b (b's second half is c)."""
    import cuda_corpus
    from cuda_corpus_video import _inputs

    x = _inputs(np.random.default_rng(1), cuda_corpus.Inputs, [])
    return x.a, x.b


def _run(cmd: list[str], what: str) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed: {(r.stdout + r.stderr)[-1500:]}")
    return r.stdout


def _retarget(ptx: str, sm: int) -> str:
    import re

    ptx = re.sub(r"^\.version\s+\S+", ".version 8.0", ptx, count=1, flags=re.M)
    return re.sub(r"^\.target\s+sm_\d+", f".target sm_{sm}", ptx, count=1, flags=re.M)


def build_cubins(src: str, out: Path) -> dict[str, Path]:
    """sm_90 and sm_86 cubins of ``src``: nvcc 13 (-O3, -G) and ptxas 12.9 (the CI toolchain's
    assembler) on nvcc's PTX (-O3 only)."""
    import cuda_build
    import nvtools

    nvcc = cuda_build.nvcc_path()
    made = {}
    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / "k.cu"
        cu.write_text(src)
        for sm in (90, 86):
            for opt, flags in (("O3", ["-O3"]), ("G", ["-G", "-O0"])):
                p = out / f"nvcc13_sm{sm}_{opt}.cubin"
                _run([nvcc, "-cubin", f"-arch=sm_{sm}", *flags, str(cu), "-o", str(p)], f"nvcc sm_{sm} {opt}")
                made[p.stem] = p
            ptx = Path(tmp) / "k.ptx"
            _run([nvcc, "-ptx", f"-arch=compute_{sm}", "-O3", str(cu), "-o", str(ptx)], "nvcc -ptx")
            (Path(tmp) / "r.ptx").write_text(_retarget(ptx.read_text(), sm))
            p = out / f"ptxas129_sm{sm}_O3.cubin"
            _run([str(nvtools.ptxas_path()), f"-arch=sm_{sm}", "-O3", str(Path(tmp) / "r.ptx"), "-o", str(p)], "ptxas 12.9")
            made[p.stem] = p
    return made


# corpus programs run through our translation on the NVIDIA Vulkan driver: the SM86 video
# kernels, and programs among the heaviest to run on lavapipe (plain buffers only)
VK_HEAVY = [
    (86, "G", "double_math"),
    (86, "G", "int64_math"),
    (86, "G", "matmul_sh"),
    (53, "G", "double_math"),
    (53, "G", "int64_math"),
    (86, "O3", "hmma_f16_k16"),
    (86, "O3", "imma_u8s8_16832"),
    (86, "G", "scan_incl"),
]


def stage_vulkan(carry: Path, only: str = "", lavapipe: bool = True) -> list[dict]:
    """Translate each program here (SM86/SM53 as the corpus test does), run it on lavapipe, and
    keep the SPIR-V, inputs, lavapipe's words and numpy's reference for the device."""
    import cuda_build
    import cuda_corpus as cc
    import vk_compute
    from compute_dispatch import open_device, run_spirv, upload
    from shader_svc.sm53.to_spirv import cbank0 as cbank53

    progs = [
        (86, o, n)
        for o in ("O3", "G")
        for n in ("video_add", "video_absminmax", "video_shift", "video_set", "video_mad", "video_ptxas86")
    ]
    progs += VK_HEAVY
    if only:  # ISA:LEVEL:KERNEL,... instead of the list above
        progs = [(int(i), o, n) for i, o, n in (t.split(":") for t in only.split(","))]
    man = []
    ctx = open_device()
    dev = ctx.__enter__()
    try:
        for isa, opt, name in progs:
            c = next(c for c in cc.CASES if c.name == name)
            k = cuda_build.build(cc.group_source(c.group, isa), isa, opt)[name]
            spv, _ = cc.translate(isa, k.code, getattr(k, "cbank2", b""))
            x = c.inputs(np.random.default_rng(1))
            assert not x.surfaces and not x.textures and not x.extra, name
            ba, bb, bo = upload(dev, x.a), upload(dev, x.b), upload(dev, x.out)
            params = struct.pack("<QQQi", ba.address, bb.address, bo.address, x.n)
            layout = vk_compute.cbank0 if isa == 86 else cbank53
            t = time.perf_counter()
            if lavapipe:
                got = run_spirv(dev, spv, layout, k.cbank0_size, x.threads, params, [bo], BLOCK)[0][: len(x.out)]
            else:  # a module lavapipe's LLVM does not finish compiling (cuda_gaps.txt): NVIDIA only
                got = np.zeros(0, np.uint32)
            dt = time.perf_counter() - t
            key = f"sm{isa}_{opt}_{name}"
            ref = np.asarray(c.reference(isa)(x), np.uint32)
            np.savez(
                carry / "vk" / f"{key}.npz", spv=np.frombuffer(spv, np.uint8), a=x.a, b=x.b, out=x.out, ref=ref, lavapipe=got
            )
            man.append(
                {
                    "key": key,
                    "isa": isa,
                    "cbank0_size": k.cbank0_size,
                    "threads": x.threads,
                    "n": x.n,
                    "kind": c.kind,
                    "ulps": c.ulps,
                    "instructions": len(k.code) // (16 if isa == 86 else 8),
                    "lavapipe_s": round(dt, 3),
                }
            )
            print(f"staged {key}: {len(spv)} bytes of SPIR-V, lavapipe {dt:.2f} s", flush=True)
    finally:
        ctx.__exit__(None, None, None)
    return man


DEVICE_SH = r"""# Written by bench/video_nvidia.py stage; runs on the device machine from the repo root.
C=$(cd "$(dirname "$0")" && pwd)
for f in $C/deb/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $C/whl/*.whl || exit 1
rm -rf /tmp/wt; mkdir -p /tmp/wt; tar xf $C/wt.tar -C /tmp/wt
export PYTHONPATH=/tmp/site:/tmp/wt PYTHONUNBUFFERED=1
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; [ -f $icd ] && export VK_DRIVER_FILES=$icd
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee $OUT/device.txt
nvcc --version | tail -2 | tee -a $OUT/device.txt
cd /tmp/wt && python3 bench/video_nvidia.py device --carry $C --out $OUT 2>&1 | tee $OUT/device.log
"""


def cmd_stage(a: argparse.Namespace) -> None:
    carry = Path(a.carry).resolve()
    shutil.rmtree(carry, ignore_errors=True)
    for sub in ("cubin", "vk", "whl", "deb"):
        (carry / sub).mkdir(parents=True)
    ks = {} if a.no_cuda else kernels()
    src = source(ks)
    (carry / "video.cu").write_text(src)
    made = {} if a.no_cuda else build_cubins(src, carry / "cubin")
    xa, xb = inputs()
    np.savez(carry / "inputs.npz", a=xa, b=xb)
    man = {
        "kernels": {n: len(s) for n, s in ks.items()},
        "cubins": sorted(made),
        "vk": stage_vulkan(carry, a.vk, not a.no_lavapipe) if not a.no_vk else [],
    }
    (carry / "manifest.json").write_text(json.dumps(man, indent=1))
    for d in ("whl", "deb"):
        for f in Path(getattr(a, d)).glob("*"):
            shutil.copy(f, carry / d)
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    _run(["tar", "cf", str(carry / "wt.tar"), "-C", str(ROOT), *[f for f in files if (ROOT / f).is_file()]], "tar")
    (carry / "device.sh").write_text(DEVICE_SH)
    size = sum(f.stat().st_size for f in carry.rglob("*") if f.is_file())
    print(f"staged {len(ks)} kernels, {len(made)} cubins, {len(man['vk'])} Vulkan programs in {carry}: {size / 2**20:.1f} MiB")


# ---------------------------------------------------------------------------------------------
# the device side: CUDA through the driver API (ctypes), Vulkan through tests/shader_svc/vk_compute


class Cuda:
    def __init__(self) -> None:
        import ctypes

        self.ct = ctypes
        self.lib = ctypes.CDLL("libcuda.so.1")
        self._ok(self.lib.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self._ok(self.lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self._ok(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev), "cuDevicePrimaryCtxRetain")
        self._ok(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    def _ok(self, rc: int, what: str) -> None:
        if rc:
            raise RuntimeError(f"{what}: CUDA error {rc}")

    def load(self, image: bytes):
        m = self.ct.c_void_p()
        self._ok(self.lib.cuModuleLoadData(self.ct.byref(m), self.ct.c_char_p(image)), "cuModuleLoadData")
        return m

    def buf(self, arr: np.ndarray) -> int:
        p = self.ct.c_uint64()
        self._ok(self.lib.cuMemAlloc_v2(self.ct.byref(p), max(arr.nbytes, 4)), "cuMemAlloc")
        self._ok(self.lib.cuMemcpyHtoD_v2(p, arr.ctypes.data_as(self.ct.c_void_p), arr.nbytes), "cuMemcpyHtoD")
        return p.value

    def run(self, mod, name: str, a: np.ndarray, b: np.ndarray, words: int, n: int, threads: int) -> np.ndarray:
        ct = self.ct
        f = ct.c_void_p()
        self._ok(self.lib.cuModuleGetFunction(ct.byref(f), mod, name.encode()), f"cuModuleGetFunction {name}")
        pa, pb, po = self.buf(a), self.buf(b), self.buf(np.zeros(words, np.uint32))
        args = [ct.c_uint64(pa), ct.c_uint64(pb), ct.c_uint64(po), ct.c_int(n)]
        argv = (ct.c_void_p * 4)(*[ct.cast(ct.pointer(x), ct.c_void_p) for x in args])
        grid = (threads + BLOCK - 1) // BLOCK
        self._ok(self.lib.cuLaunchKernel(f, grid, 1, 1, BLOCK, 1, 1, 0, None, argv, None), f"cuLaunchKernel {name}")
        self._ok(self.lib.cuCtxSynchronize(), f"cuCtxSynchronize {name}")
        out = np.zeros(words, np.uint32)
        self._ok(self.lib.cuMemcpyDtoH_v2(out.ctypes.data_as(ct.c_void_p), ct.c_uint64(po), out.nbytes), "cuMemcpyDtoH")
        for p in (pa, pb, po):
            self.lib.cuMemFree_v2(ct.c_uint64(p))
        return out


def cmd_device(a: argparse.Namespace) -> None:
    from cuda_corpus_video import N

    carry, out = Path(a.carry), Path(a.out)
    man = json.loads((carry / "manifest.json").read_text())
    x = np.load(carry / "inputs.npz")
    cubins = {p.stem: p.read_bytes() for p in sorted((carry / "cubin").glob("*sm90*.cubin"))}
    with tempfile.TemporaryDirectory() as tmp:  # the device's own nvcc on the same source
        for opt, flags in (("O3", ["-O3"]), ("G", ["-G", "-O0"])) if man["kernels"] else ():
            p = Path(tmp) / f"dev_sm90_{opt}.cubin"
            t = time.perf_counter()
            subprocess.run(["nvcc", "-cubin", "-arch=sm_90", *flags, str(carry / "video.cu"), "-o", str(p)], check=True)
            print(f"device nvcc sm_90 {opt}: {time.perf_counter() - t:.1f} s", flush=True)
            cubins[f"devnvcc_sm90_{opt}"] = p.read_bytes()
    cu = Cuda()
    res = {}
    for label, image in cubins.items():
        mod = cu.load(image)
        for name, nspec in man["kernels"].items():
            res[f"{label}/{name}"] = cu.run(mod, name, x["a"], x["b"], N * nspec, N, N)
        print(f"CUDA {label}: {len(man['kernels'])} kernels run", flush=True)
    if res:
        np.savez_compressed(out / "cuda.npz", **res)
        same = [k for k in res if np.array_equal(res[k], res[k.replace(k.split("/")[0], "nvcc13_sm90_O3")])]
        print(f"CUDA: {len(same)} of {len(res)} runs equal nvcc13_sm90_O3's words for the same kernel", flush=True)
    if a.no_vk or not man["vk"]:
        return
    import types

    sys.modules.setdefault("pytest", types.SimpleNamespace(skip=lambda m: (_ for _ in ()).throw(RuntimeError(m))))
    import vk_compute
    from compute_dispatch import run_spirv, upload
    from shader_svc.sm53.to_spirv import cbank0 as cbank53

    import vulkan

    dev = vk_compute.ComputeDevice()
    props = vulkan.vkGetPhysicalDeviceProperties(dev.phys)
    print("Vulkan device:", props.deviceName, "driver", props.driverVersion, flush=True)
    vk = {}
    lines = []
    for m in man["vk"]:
        z = np.load(carry / "vk" / f"{m['key']}.npz")
        layout = vk_compute.cbank0 if m["isa"] == 86 else cbank53
        times = []
        for _ in range(3):
            ba, bb, bo = upload(dev, z["a"]), upload(dev, z["b"]), upload(dev, z["out"])
            params = struct.pack("<QQQi", ba.address, bb.address, bo.address, m["n"])
            t = time.perf_counter()
            got = run_spirv(dev, z["spv"].tobytes(), layout, m["cbank0_size"], m["threads"], params, [bo], BLOCK)[0][
                : len(z["out"])
            ]
            times.append(time.perf_counter() - t)
        vk[m["key"]] = got
        line = (
            f"{m['key']}: NVIDIA == lavapipe {np.array_equal(got, z['lavapipe'])}, == numpy ref "
            f"{int((got != z['ref']).sum())} words differ of {len(got)}; dispatch {min(times) * 1e3:.1f} ms "
            f"(lavapipe here {m['lavapipe_s'] * 1e3:.0f} ms)"
        )
        lines.append(line)
        print(line, flush=True)
    dev.close()
    np.savez_compressed(out / "vulkan.npz", **vk)
    (out / "vulkan.txt").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------
# here: the comparison


def cmd_lavapipe(a: argparse.Namespace) -> None:
    """Every kernel of ``kernels()`` as SM86 code (nvcc 13, or NVRTC + ptxas 12.9 with
    NXRECOMP_CUDA_TOOLCHAIN=nvrtc) translated and run on lavapipe: ``--out`` .npz of the words."""
    import cuda_build
    import cuda_corpus as cc
    import vk_compute
    from compute_dispatch import open_device, run_spirv, upload
    from cuda_corpus_video import N

    ks = kernels()
    if a.k:
        ks = {n: s for n, s in ks.items() if a.k in n}
    xa, xb = inputs()
    built = cuda_build.build(source(ks), 86, a.opt)
    res = {}
    ctx = open_device()
    dev = ctx.__enter__()
    try:
        for name, specs in ks.items():
            k = built[name]
            t = time.perf_counter()
            spv, _ = cc.translate(86, k.code)
            ba, bb, bo = upload(dev, xa), upload(dev, xb), upload(dev, np.zeros(N * len(specs), np.uint32))
            params = struct.pack("<QQQi", ba.address, bb.address, bo.address, N)
            res[name] = run_spirv(dev, spv, vk_compute.cbank0, k.cbank0_size, N, params, [bo], BLOCK)[0][: N * len(specs)]
            print(f"{name}: {len(k.code) // 16} instructions, {time.perf_counter() - t:.1f} s", flush=True)
    finally:
        ctx.__exit__(None, None, None)
    np.savez_compressed(a.out, **res)


def cmd_compare(a: argparse.Namespace) -> None:
    import cuda_corpus_video as v

    carry, got = Path(a.carry), Path(a.got)
    ks = kernels()
    x = np.load(carry / "inputs.npz")
    cu = np.load(got / "cuda.npz")
    labels = sorted({k.split("/")[0] for k in cu.files})
    N = v.N
    tot = {lb: [0, 0, 0] for lb in labels}  # words, != ISA, != model
    forms_isa, forms_model = set(), set()
    for name, specs in ks.items():
        S = len(specs)
        isa = np.zeros((N, S), np.uint32)
        emu = np.zeros((N, S), np.uint32)
        for i in range(N):
            aa, bb, cc = int(x["a"][i]), int(x["b"][i]), int(x["b"][N + i])
            for k, s in enumerate(specs):
                isa[i, k] = v.ref_one(s, aa, bb, cc)
                emu[i, k] = v.ref_emulated(s, aa, bb, cc)
        for lb in labels:
            hw = cu[f"{lb}/{name}"].reshape(N, S)
            tot[lb][0] += hw.size
            tot[lb][1] += int((hw != isa).sum())
            tot[lb][2] += int((hw != emu).sum())
            for k in range(S):
                if (hw[:, k] != isa[:, k]).any():
                    forms_isa.add((name, k))
                if (hw[:, k] != emu[:, k]).any():
                    forms_model.add((name, k))
                    if lb == labels[0]:
                        i = int(np.nonzero(hw[:, k] != emu[:, k])[0][0])
                        print(
                            f"MODEL MISS {lb} {name}[{k}] {v.ptx_text(specs[k])}: a={x['a'][i]:08x} b={x['b'][i]:08x} "
                            f"c={x['b'][N + i]:08x} hw={hw[i, k]:08x} model={emu[i, k]:08x} isa={isa[i, k]:08x}"
                        )
    for lb in labels:
        w, di, dm = tot[lb]
        print(f"{lb}: {w} words; differ from the PTX ISA's definition: {di}; from the model of ptxas's emulation: {dm}")
    print(
        f"forms (of {sum(len(s) for s in ks.values())}) where the hardware departs from the ISA text: {len(forms_isa)}; where the model misses: {len(forms_model)}"
    )
    if (got / "vulkan.txt").is_file():
        print((got / "vulkan.txt").read_text())


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(required=True)
    st = sub.add_parser("stage")
    st.add_argument("--carry", required=True)
    st.add_argument("--whl", required=True, help="folder of cp312 wheels: vulkan, cffi, pycparser, pyelftools")
    st.add_argument("--deb", required=True, help="folder of the Vulkan loader / glvnd debs")
    st.add_argument("--no-vk", action="store_true")
    st.add_argument("--no-cuda", action="store_true", help="Vulkan programs only")
    st.add_argument(
        "--no-lavapipe", action="store_true", help="do not run the programs here first (modules lavapipe cannot compile)"
    )
    st.add_argument("--vk", default="", help="ISA:LEVEL:KERNEL,... (default: the video kernels and VK_HEAVY)")
    st.set_defaults(func=cmd_stage)
    dv = sub.add_parser("device")
    dv.add_argument("--carry", required=True)
    dv.add_argument("--out", required=True)
    dv.add_argument("--no-vk", action="store_true")
    dv.set_defaults(func=cmd_device)
    cp = sub.add_parser("compare")
    cp.add_argument("--carry", required=True)
    cp.add_argument("--got", required=True)
    cp.set_defaults(func=cmd_compare)
    lp = sub.add_parser("lavapipe")
    lp.add_argument("--out", required=True)
    lp.add_argument("--opt", default="O3")
    lp.add_argument("-k", default="")
    lp.set_defaults(func=cmd_lavapipe)
    a = ap.parse_args(argv)
    a.func(a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
