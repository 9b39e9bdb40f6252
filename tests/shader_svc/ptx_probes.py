"""PTX that might make ptxas emit the last untranslated mnemonics of issue 31's tables, and what
ptxas 12.9 (PyPI, ``nvtools.PTXAS_WHEEL``) makes of it for sm_86 and sm_53 at -O3 and -O0
(shader-rest; ``shader_svc/README.md``, "The last untranslated mnemonics").

Each probe is PTX with ``{TARGET}`` for the ``.target`` line; ``isas`` the ISAs whose PTX
supports it (the PTX ISA's minimum targets: ``fence.proxy``, ``cvta.param``, cache eviction
priorities need sm_70 / sm_80), ``emits`` the mnemonics ptxas is expected to make of it per
(ISA, level) that the probe is about.  ``test_rest_ops.py`` compiles every probe and checks
both ways: the expected mnemonics appear, and none of the mnemonics still refused by name does
(a newer ptxas that emits one fails the test: the mnemonic then needs a rule).

Run as a script it prints each probe's mnemonics (``python tests/shader_svc/ptx_probes.py``).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

HEAD = ".version 8.0\n.target {TARGET}\n.address_size 64\n"

# the mnemonics with no translation rule (isa_coverage.lowering_keys), refused by name
REFUSED = {
    86: set(
        "CCTLT CLMAD CSMTEST FOOTPRINT GETLMEMBASE ISBEWR JMP JMX JMXU LDTRAM RPCMOV SETCTAID SETLMEMBASE SUQUERY UCLEA".split()
    ),
    53: set("CCTLT GETCRSPTR GETLMEMBASE IDE JMP LONGJMP PEXIT PLONGJMP R2B RTT SETCRSPTR SETLMEMBASE STP TXA".split()),
}


@dataclass(frozen=True)
class Probe:
    name: str
    what: str  # the mnemonics it was written for
    ptx: str
    isas: tuple[int, ...] = (86, 53)
    # (isa, level) -> mnemonics (opcode with modifiers, e.g. "BRXU", "NOP.TRIG") expected
    emits: dict = field(default_factory=dict)
    flags: tuple[str, ...] = ()  # extra ptxas flags (-c: relocatable code, calls left to the linker)
    # ISA -> a piece of ptxas's error where ptxas refuses the PTX for it (cluster PTX: sm_90)
    refuses: dict = field(default_factory=dict)


PROBES = [
    Probe(
        "brx_uniform",
        "BRXU (a jump table whose index is a kernel parameter)",
        HEAD
        + r"""
.visible .entry k(.param .u64 out, .param .u32 sel)
{
  .reg .u64 %rd<4>; .reg .u32 %r<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r2, [sel];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r2, 3;
  ts: .branchtargets L0, L1, L2, L3;
  brx.idx.uni %r2, ts;
L0: add.u32 %r1, %r1, 10; bra.uni D;
L1: add.u32 %r1, %r1, 20; bra.uni D;
L2: mul.lo.u32 %r1, %r1, 3; bra.uni D;
L3: xor.b32 %r1, %r1, 5; bra.uni D;
D:
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
        emits={(86, "O3"): {"BRXU"}, (86, "O0"): {"BRX"}, (53, "O3"): {"BRX"}, (53, "O0"): {"BRX"}},
    ),
    Probe(
        "brx_ctaid_shared",
        "BRXU / JMXU (the index %ctaid.x, which the thread index also uses: a vector register)",
        HEAD
        + r"""
.visible .entry k(.param .u64 out)
{
  .reg .u64 %rd<4>; .reg .u32 %r<8>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r5, %ctaid.x; mov.u32 %r6, %ntid.x; mov.u32 %r7, %tid.x;
  mad.lo.s32 %r1, %r5, %r6, %r7;
  and.b32 %r2, %r5, 3;
  ts: .branchtargets L0, L1, L2, L3;
  brx.idx %r2, ts;
L0: add.u32 %r1, %r1, 10; bra.uni D;
L1: add.u32 %r1, %r1, 20; bra.uni D;
L2: mul.lo.u32 %r1, %r1, 3; bra.uni D;
L3: xor.b32 %r1, %r1, 5; bra.uni D;
D:
  mul.wide.u32 %rd2, %r1, 4; add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
""",
        emits={(86, "O3"): {"BRX"}},
    ),
    Probe(
        "indirect_calls",
        "JMX / JMXU / JMP (calls through a register: uniform, divergent, with .calltargets)",
        HEAD
        + r"""
.func (.param .u32 r) fa(.param .u32 a) { .reg .u32 %r<3>; ld.param.u32 %r1,[a]; add.u32 %r1,%r1,1; st.param.u32 [r],%r1; ret; }
.func (.param .u32 r) fb(.param .u32 a) { .reg .u32 %r<3>; ld.param.u32 %r1,[a]; mul.lo.u32 %r1,%r1,3; st.param.u32 [r],%r1; ret; }
.global .u64 tbl[2] = {fa, fb};
.visible .entry k(.param .u64 out, .param .u32 sel, .param .u64 fp)
{
  .reg .u64 %rd<8>; .reg .u32 %r<8>; .reg .pred %p;
  flist: .calltargets fa, fb;
  proto: .callprototype (.param .u32 _) _ (.param .u32 _);
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r2, [sel];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r2, 1;
  mov.u64 %rd3, tbl;
  mul.wide.u32 %rd4, %r2, 8;
  add.u64 %rd3, %rd3, %rd4;
  ld.global.u64 %rd5, [%rd3];
  .param .u32 pa; .param .u32 pr;
  st.param.u32 [pa], %r1;
  call.uni (pr), %rd5, (pa), proto;
  ld.param.u32 %r3, [pr];
  ld.param.u64 %rd6, [fp];
  st.param.u32 [pa], %r3;
  call (pr), %rd6, (pa), proto;
  ld.param.u32 %r3, [pr];
  mov.u64 %rd7, fb;
  setp.eq.u32 %p, %r3, 7;
  selp.u64 %rd7, %rd7, %rd6, %p;
  st.param.u32 [pa], %r3;
  call (pr), %rd7, (pa), flist;
  ld.param.u32 %r3, [pr];
  st.global.u32 [%rd1], %r3;
  ret;
}
""",
        emits={(86, "O3"): {"CALL.REL.NOINC"}, (53, "O3"): {"PRET", "BRX"}, (53, "O0"): {"PRET", "BRX"}},
    ),
    Probe(
        "extern_call",
        "JMP / JMX (calls to an external function in relocatable code, ptxas -c)",
        HEAD
        + r"""
.extern .func (.param .u32 r) g(.param .u32 a);
.visible .func (.param .u32 r) h(.param .u32 a)
{ .reg .u32 %r<3>; .param .u32 pa; .param .u32 pr; ld.param.u32 %r1,[a]; st.param.u32 [pa], %r1;
  call.uni (pr), g, (pa); ld.param.u32 %r2,[pr]; st.param.u32 [r],%r2; ret; }
.visible .entry k(.param .u64 out)
{
  .reg .u64 %rd<4>; .reg .u32 %r<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  .param .u32 pa; .param .u32 pr;
  st.param.u32 [pa], %r1;
  call.uni (pr), h, (pa);
  ld.param.u32 %r3, [pr];
  st.global.u32 [%rd1], %r3;
  ret;
}
""",
        emits={(86, "O3"): {"CALL.ABS.NOINC"}, (53, "O3"): {"JCAL"}},
        flags=("-c",),
    ),
    Probe(
        "pmevent",
        "PMTRIG (performance-monitor events)",
        HEAD
        + r"""
.visible .entry k(.param .u64 out)
{
  .reg .u64 %rd<2>; .reg .u32 %r<2>;
  ld.param.u64 %rd1, [out];
  pmevent 3;
  pmevent.mask 0x0f;
  mov.u32 %r1, %tid.x;
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
        emits={(86, "O3"): {"PMTRIG"}, (86, "O0"): {"PMTRIG"}, (53, "O3"): {"NOP.TRIG"}, (53, "O0"): {"NOP.TRIG"}},
    ),
    Probe(
        "cache_sm80",
        "CCTLT (prefetches, eviction priority, discard, cache policies)",
        HEAD
        + r"""
.visible .entry k(.param .u64 out)
{
  .reg .u64 %rd<3>; .reg .u32 %r<4>; .reg .b64 %pol;
  ld.param.u64 %rd1, [out];
  prefetch.global.L1 [%rd1];
  prefetch.global.L2 [%rd1];
  prefetch.local.L1 [%rd1];
  prefetch.local.L2 [%rd1];
  prefetchu.L1 [%rd1];
  prefetch.global.L2::evict_last [%rd1];
  prefetch.global.L2::evict_normal [%rd1];
  applypriority.global.L2::evict_normal [%rd1], 128;
  discard.global.L2 [%rd1], 128;
  createpolicy.fractional.L2::evict_last.b64 %pol, 1.0;
  ld.global.L2::cache_hint.u32 %r2, [%rd1], %pol;
  mov.u32 %r1, %tid.x;
  add.u32 %r1, %r1, %r2;
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
        isas=(86,),
        emits={(86, "O3"): {"CCTL.E.PF1", "CCTL.E.PF2", "CCTL.E.PML2", "CCTL.E.DML2", "CCTL.E.RML2", "CCTLL.PF1"}},
    ),
    Probe(
        "cache_sm53",
        "CCTLT (the prefetches sm_53's PTX has)",
        HEAD
        + r"""
.visible .entry k(.param .u64 out)
{
  .reg .u64 %rd<3>; .reg .u32 %r<4>;
  ld.param.u64 %rd1, [out];
  prefetch.global.L1 [%rd1];
  prefetch.global.L2 [%rd1];
  prefetch.local.L1 [%rd1];
  prefetchu.L1 [%rd1];
  ld.global.nc.u32 %r2, [%rd1+4];
  mov.u32 %r1, %tid.x;
  add.u32 %r1, %r1, %r2;
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
        isas=(53,),
        emits={(53, "O3"): {"CCTL.E.PF1", "CCTL.E.PF2"}},
    ),
    Probe(
        "fences",
        "CCTLT (proxy fences: fence.proxy.alias invalidates the L1 with CCTL.IVALL)",
        HEAD
        + r"""
.visible .entry k(.param .u64 out)
{
  .reg .u64 %rd<2>; .reg .u32 %r<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  st.global.u32 [%rd1], %r1;
  fence.proxy.alias;
  ld.global.u32 %r2, [%rd1+4];
  fence.sc.sys;
  fence.acq_rel.gpu;
  membar.sys;
  st.global.u32 [%rd1+8], %r2;
  ret;
}
""",
        isas=(86,),
        emits={(86, "O3"): {"CCTL.IVALL", "MEMBAR.SC.SYS"}},
    ),
    Probe(
        "trap_exit",
        "PEXIT / LONGJMP / PLONGJMP / RTT (exit, trap and brkpt inside a function, a divergent call)",
        HEAD
        + r"""
.func (.param .u32 r) f(.param .u32 a)
{
  .reg .u32 %r<6>; .reg .pred %p<4>;
  ld.param.u32 %r1, [a];
  mov.u32 %r2, 0;
L:
  add.u32 %r2, %r2, %r1;
  setp.gt.u32 %p1, %r2, 100;
  @%p1 bra X;
  setp.eq.u32 %p2, %r2, 42;
  @%p2 exit;
  setp.eq.u32 %p2, %r2, 43;
  @%p2 trap;
  setp.eq.u32 %p2, %r2, 44;
  @%p2 brkpt;
  and.b32 %r3, %r2, 7;
  setp.eq.u32 %p3, %r3, 5;
  @%p3 bra X;
  add.u32 %r1, %r1, 1;
  bra L;
X:
  st.param.u32 [r], %r2;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .u64 %rd<4>; .reg .u32 %r<6>; .reg .pred %p<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r4, %r1;
  setp.lt.u32 %p1, %r1, 16;
  @!%p1 bra S;
  .param .u32 pa; .param .u32 pr;
  st.param.u32 [pa], %r1;
  call (pr), f, (pa);
  ld.param.u32 %r4, [pr];
S:
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
""",
        emits={(86, "O3"): {"EXIT", "BPT.TRAP"}, (53, "O3"): {"EXIT", "BPT.TRAP", "CAL"}},
    ),
    Probe(
        "suq",
        "SUQUERY (every suq query, on a handle and on a .surfref)",
        HEAD
        + r"""
.global .surfref sr;
.visible .entry k(.param .u64 out, .param .u64 h)
{
  .reg .u64 %rd<3>; .reg .b32 %r<10>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [h];
  suq.width.b32 %r1, [%rd2];
  suq.height.b32 %r2, [%rd2];
  suq.depth.b32 %r3, [%rd2];
  suq.channel_data_type.b32 %r4, [%rd2];
  suq.channel_order.b32 %r5, [%rd2];
  suq.array_size.b32 %r6, [%rd2];
  suq.memory_layout.b32 %r7, [%rd2];
  suq.width.b32 %r8, [sr];
  suq.channel_order.b32 %r9, [sr];
  add.u32 %r1,%r1,%r2; add.u32 %r1,%r1,%r3; add.u32 %r1,%r1,%r4; add.u32 %r1,%r1,%r5;
  add.u32 %r1,%r1,%r6; add.u32 %r1,%r1,%r7; add.u32 %r1,%r1,%r8; add.u32 %r1,%r1,%r9;
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
        emits={(86, "O3"): {"TXQ"}, (53, "O3"): {"TXQ.T", "TXQ.P"}},
    ),
    Probe(
        "tex_forms",
        "TXA / FOOTPRINT (multisample fetches, a texref on linear memory, txq.num_samples)",
        HEAD
        + r"""
.global .texref t1;
.visible .entry k(.param .u64 out, .param .u64 h)
{
  .reg .u64 %rd<3>; .reg .u32 %r<12>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [h];
  mov.u32 %r1, %tid.x;
  tex.2dms.v4.u32.s32 {%r2,%r3,%r4,%r5}, [%rd2, {%r1, %r1, %r1, %r1}];
  tex.1d.v4.u32.s32 {%r6,%r7,%r8,%r9}, [t1, {%r1}];
  txq.num_samples.b32 %r10, [%rd2];
  add.u32 %r2,%r2,%r6; add.u32 %r2,%r2,%r10;
  st.global.u32 [%rd1], %r2;
  ret;
}
""",
        emits={(86, "O3"): {"TLD.SCR.LZ.MS"}, (53, "O3"): {"TLDS.LZ.MS.P"}},
    ),
    Probe(
        "const_window",
        "UCLEA (generic pointers into constant memory, indexed constant loads)",
        HEAD
        + r"""
.const .align 4 .u32 cv[16] = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16};
.visible .entry k(.param .u64 out, .param .u32 i)
{
  .reg .u64 %rd<10>; .reg .u32 %r<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [i];
  mov.u64 %rd2, cv;
  cvta.const.u64 %rd3, %rd2;
  mul.wide.u32 %rd4, %r1, 4;
  add.u64 %rd5, %rd3, %rd4;
  ld.u32 %r2, [%rd5];
  st.global.u64 [%rd1+8], %rd3;
  cvta.to.const.u64 %rd6, %rd3;
  add.u64 %rd7, %rd6, %rd4;
  ld.const.u32 %r3, [%rd7+4];
  mov.u32 %r4, %tid.x;
  mul.wide.u32 %rd8, %r4, 4;
  add.u64 %rd9, %rd2, %rd8;
  ld.const.u32 %r5, [%rd9];
  add.u32 %r2, %r2, %r3;
  add.u32 %r2, %r2, %r5;
  st.global.u32 [%rd1], %r2;
  ret;
}
""",
    ),
    Probe(
        "param_window",
        "UCLEA (cvta.param: a generic pointer to a kernel parameter, passed to a function)",
        HEAD
        + r"""
.func (.param .u32 r) g(.param .u64 p) { .reg .u64 %rd<2>; .reg .u32 %r<2>; ld.param.u64 %rd1,[p]; ld.u32 %r1,[%rd1+4]; st.param.u32 [r],%r1; ret; }
.visible .entry k(.param .u64 out, .param .align 8 .b8 s[16])
{
  .reg .u64 %rd<8>; .reg .u32 %r<8>;
  ld.param.u64 %rd1, [out];
  mov.u64 %rd2, s;
  cvta.param.u64 %rd3, %rd2;
  mov.u32 %r1, %tid.x;
  and.b32 %r1, %r1, 3;
  mul.wide.u32 %rd4, %r1, 4;
  add.u64 %rd5, %rd3, %rd4;
  ld.u32 %r2, [%rd5];
  .param .u64 pa; .param .u32 pr;
  st.param.u64 [pa], %rd3;
  call (pr), g, (pa);
  ld.param.u32 %r3, [pr];
  add.u32 %r2, %r2, %r3;
  st.global.u32 [%rd1], %r2;
  ret;
}
""",
        isas=(86,),
    ),
    Probe(
        "local_window",
        "GETLMEMBASE / SETLMEMBASE (cvta.local, cvta.to.local, isspacep.local, alloca)",
        HEAD
        + r"""
.visible .entry k(.param .u64 out, .param .u64 p)
{
  .reg .u64 %rd<14>; .reg .u32 %r<8>; .reg .pred %p<2>;
  .local .align 4 .b8 buf[64];
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd10, [p];
  mov.u32 %r2, %tid.x;
  mov.u64 %rd2, buf;
  cvta.local.u64 %rd3, %rd2;
  st.u32 [%rd3], %r2;
  cvta.to.local.u64 %rd11, %rd10;
  ld.local.u32 %r5, [%rd11];
  isspacep.local %p1, %rd10;
  selp.u32 %r6, 1, 0, %p1;
  alloca.u64 %rd12, 16, 8;
  cvta.local.u64 %rd13, %rd12;
  st.u32 [%rd13], %r2;
  ld.u32 %r3, [%rd3];
  add.u32 %r3, %r3, %r5;
  add.u32 %r3, %r3, %r6;
  st.global.u32 [%rd1], %r3;
  st.global.u64 [%rd1+8], %rd3;
  ret;
}
""",
    ),
    Probe(
        "alloca_recursion",
        "GETLMEMBASE / SETLMEMBASE / GETCRSPTR / SETCRSPTR (alloca, stacksave and stackrestore in a recursive function)",
        HEAD
        + r"""
.func (.param .u32 r) f(.param .u32 a)
{
  .reg .u32 %r<8>; .reg .u64 %rd<8>; .reg .pred %p<2>;
  ld.param.u32 %r1, [a];
  stacksave.u64 %rd7;
  add.u32 %r2, %r1, 1;
  shl.b32 %r3, %r2, 2;
  cvt.u64.u32 %rd1, %r3;
  alloca.u64 %rd2, %rd1, 16;
  st.local.u32 [%rd2], %r1;
  setp.eq.u32 %p1, %r1, 0;
  mov.u32 %r5, 1;
  @%p1 bra DONE;
  sub.u32 %r4, %r1, 1;
  { .param .u32 pa; .param .u32 pr;
  st.param.u32 [pa], %r4;
  call (pr), f, (pa);
  ld.param.u32 %r5, [pr]; }
DONE:
  ld.local.u32 %r6, [%rd2];
  add.u32 %r5, %r5, %r6;
  stackrestore.u64 %rd7;
  st.param.u32 [r], %r5;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .u64 %rd<4>; .reg .u32 %r<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  and.b32 %r1, %r1, 7;
  { .param .u32 pa; .param .u32 pr;
  st.param.u32 [pa], %r1;
  call (pr), f, (pa);
  ld.param.u32 %r2, [pr]; }
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
""",
        emits={(86, "O3"): {"STL", "LDL"}, (53, "O3"): {"STL", "LDL"}},
    ),
    Probe(
        "barriers",
        "R2B / B2R (named barriers with register ids and counts, barrier reductions)",
        HEAD
        + r"""
.visible .entry k(.param .u64 out, .param .u32 b)
{
  .reg .u64 %rd<2>; .reg .u32 %r<6>; .reg .pred %p<3>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r5, [b];
  mov.u32 %r1, %tid.x;
  and.b32 %r3, %r1, 1;
  setp.eq.u32 %p1, %r3, 1;
  shr.u32 %r3, %r1, 5;
  bar.sync %r3, 32;
  bar.arrive %r5, %r1;
  barrier.sync %r5;
  bar.red.or.pred %p2, 3, 64, %p1;
  bar.red.popc.u32 %r4, 4, %p1;
  barrier.sync.aligned 5;
  bar.warp.sync 0xffffffff;
  selp.u32 %r2, 1, 0, %p2;
  add.u32 %r2, %r2, %r4;
  st.global.u32 [%rd1], %r2;
  ret;
}
""",
        emits={(86, "O3"): {"B2R.RESULT"}, (53, "O3"): {"B2R.RESULT"}},
    ),
]

PROBES += [
    Probe(
        "special_regs",
        "B2R (plain), SETCTAID, GETCRSPTR (activemask, warp / SM ids, shared-memory sizes, bar.warp.sync on a mask)",
        HEAD
        + r"""
.visible .entry k(.param .u64 out, .param .u32 m)
{
  .reg .u64 %rd<3>; .reg .u32 %r<10>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r9, [m];
  activemask.b32 %r1;
  mov.u32 %r2, %warpid;
  mov.u32 %r3, %nwarpid;
  mov.u32 %r4, %smid;
  mov.u32 %r5, %lanemask_lt;
  mov.u64 %rd2, %gridid;
  bar.warp.sync %r9;
  mov.u32 %r6, %dynamic_smem_size;
  mov.u32 %r7, %total_smem_size;
  mov.u32 %r8, %nsmid;
  add.u32 %r1, %r1, %r2; add.u32 %r1, %r1, %r3; add.u32 %r1, %r1, %r4; add.u32 %r1, %r1, %r5;
  add.u32 %r1, %r1, %r6; add.u32 %r1, %r1, %r7; add.u32 %r1, %r1, %r8;
  st.global.u32 [%rd1], %r1;
  st.global.u64 [%rd1+8], %rd2;
  ret;
}
""",
        emits={(86, "O3"): {"VOTE.ANY", "S2R"}, (53, "O3"): {"S2R"}},
    ),
    Probe(
        "cluster",
        "CSMTEST / SETCTAID (cluster ranks and distributed shared memory)",
        HEAD
        + r"""
.shared .u32 s;
.visible .entry k(.param .u64 out)
{
  .reg .u64 %rd<3>; .reg .u32 %r<3>;
  ld.param.u64 %rd1, [out];
  mov.u64 %rd2, s;
  getctarank.shared::cluster.u64 %r1, %rd2;
  mov.u32 %r2, %cluster_ctarank;
  add.u32 %r1, %r1, %r2;
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
        refuses={86: "requires .target sm_90 or higher", 53: "requires .target sm_90 or higher"},
    ),
]

LEVELS = ("O3", "O0")


def compile_probe(p: Probe, isa: int, level: str) -> bytes:
    """The probe's cubin from ptxas 12.9 (PyPI) for sm_``isa`` at ``level``."""
    import nvtools

    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(p.ptx.replace("{TARGET}", f"sm_{isa}"))
        cmd = [str(nvtools.ptxas_path()), f"-arch=sm_{isa}", f"-{level}", *p.flags, str(src), "-o", str(out)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas failed on probe {p.name} (sm_{isa} -{level}): {r.stderr.strip()[-400:]}")
        return out.read_bytes()


def opcodes(cubin: bytes, isa: int) -> set[str]:
    """Every opcode (with its modifiers) nvdisasm prints for the cubin's code."""
    if isa == 86:
        import nvtools

        return {ln.opcode for lines in nvtools.nvdisasm_cubin(cubin).values() for ln in lines}
    import sm53_tools

    return {ln.opcode for lines in sm53_tools.nvdisasm53_cubin(cubin).values() for ln in lines.values()}


def mnemonics(ops: set[str]) -> set[str]:
    return {re.split(r"\.", o, maxsplit=1)[0] for o in ops}


def main() -> int:
    for p in PROBES:
        for isa in p.isas:
            if isa in p.refuses:
                print(f"{p.name:18} sm_{isa}: refused by ptxas ({p.refuses[isa]})")
                continue
            for level in LEVELS:
                ops = opcodes(compile_probe(p, isa, level), isa)
                print(f"{p.name:18} sm_{isa} -{level}: {' '.join(sorted(ops))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
