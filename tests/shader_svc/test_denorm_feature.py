"""shader-nv (issue 31): the ``denorm_preserve32`` translation feature.  NVIDIA's Vulkan driver
flushes f32 denormals unless a module declares ``DenormPreserve 32`` (bench/nvidia_corpus.py: 60
corpus programs of the directed_alu and shader_u groups differed on an H100 without it and were
equal with it), whereas CUDA's f32 arithmetic without .FTZ keeps them.  The GPU process sets the
bit where the device reports shaderDenormPreserveFloat32; lavapipe 22.3 does not, so the corpus
run here translates without it.  Checked against spirv-val and the SPIR-V grammar's numbers."""

from __future__ import annotations

import struct

import pytest

import cuda_build
import cuda_corpus as cc

OP_CAPABILITY, OP_EXECUTION_MODE = 17, 16
CAP_DENORM_PRESERVE, MODE_DENORM_PRESERVE, MODE_LOCAL_SIZE = 4464, 4459, 17  # SPIR-V 1.4 float controls


def _instructions(spv: bytes):
    words = struct.unpack(f"<{len(spv) // 4}I", spv)
    i = 5
    while i < len(words):
        n, op = words[i] >> 16, words[i] & 0xFFFF
        yield op, words[i + 1 : i + n]
        i += n


@pytest.mark.parametrize("isa", [86, 53])
def test_denorm_preserve_declared_with_the_feature_only(isa):
    from shader_svc.request import FEATURES

    try:
        k = cuda_build.build(cc.group_source("directed_alu", isa), isa, "O3")["fadd_rz_edge"]
    except cuda_build.NoCompiler as e:
        pytest.skip(f"LOUD SKIP: {e}")
    bit = FEATURES["denorm_preserve32"]
    for feats in (0, bit):
        spv, _ = cc.translate(isa, k.code, getattr(k, "cbank2", b""), features=feats)
        assert cc.spirv_val(spv) == "ok"
        ins = list(_instructions(spv))
        modes = {tuple(args[1:]) for op, args in ins if op == OP_EXECUTION_MODE}
        caps = {args[0] for op, args in ins if op == OP_CAPABILITY}
        assert (MODE_LOCAL_SIZE, 64, 1, 1) in modes
        assert ((MODE_DENORM_PRESERVE, 32) in modes) == bool(feats), modes
        assert (CAP_DENORM_PRESERVE in caps) == bool(feats), caps


def test_feature_bits_distinct_and_known():
    from shader_svc.request import FEATURES, KNOWN_FEATURES

    assert FEATURES["denorm_preserve32"] & KNOWN_FEATURES
    assert len(set(FEATURES.values())) == len(FEATURES)  # one bit each
