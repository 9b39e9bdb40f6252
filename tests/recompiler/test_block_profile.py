"""Block profiles (recompiler/profile.py): the file's round trip, a bad file rejected with an
error naming the file and the field, and the mapping of guest blocks onto the lines of generated
C in clang's sample profile format (checked by clang itself: the profile it is handed is applied
to the blocks the counts name)."""

from __future__ import annotations

import json
import re
import pytest

from nxrecomp.common.errors import NxError
from recompiler import cc, profile

C = """\
#include <stdint.h>
typedef uint64_t u64;
static u64 I_2000(u64 a0) {
 L_2000:;
  if (a0 > 3) goto L_2010;
  a0 = a0 * 7;
 L_2010:;
  return a0 + 1;
}
u64 F_1000(u64 a0, u64 a1) {
  u64 x0 = a0;
 L_1000:;
  if (x0 & 1) goto L_1020;
 L_1008:;
  x0 = x0 * 3 + a1;
  x0 ^= x0 >> 7;
  goto L_1030;
 L_1020:;
  x0 = x0 / 5 + I_2000(a1);
 L_1030:;
  return x0;
}
"""


def test_round_trip(tmp_path):
    p = tmp_path / "p.json"
    blocks = {0x1000: 10, 0x1008: 3, 0x1020: 7, 0xFFFF_0000_1234: 1 << 40, 0x1030: 0}
    profile.write(p, blocks, program="ab" * 32)
    back = profile.read(p, program="ab" * 32)
    assert back == {a: n for a, n in blocks.items() if n}
    assert not list(tmp_path.glob("*.tmp")), "the atomic write left its temporary file"
    assert profile.read(p) == back  # no program to check against


@pytest.mark.parametrize(
    "doc, field, words",
    [
        ("{not json", None, "not JSON"),
        (json.dumps({"format": "other", "version": 1, "blocks": {}}), "format", "not a block profile"),
        (json.dumps({"format": profile.FORMAT, "version": 99, "blocks": {}}), "version", "version 99"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "program": "cd" * 32, "blocks": {}}), "program", "other guest code"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "blocks": []}), "blocks", "address: count"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "blocks": {"zz": 1}}), "blocks", "not hexadecimal"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "blocks": {"0x10": -1}}), "blocks", "not a count"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "blocks": {"0x10": "5"}}), "blocks", "not a count"),
    ],
)
def test_bad_file_named(tmp_path, doc, field, words):
    p = tmp_path / "bad.json"
    p.write_text(doc)
    with pytest.raises(NxError) as e:
        profile.read(p, program="ab" * 32)
    assert e.value.path == str(p) and e.value.field == field
    assert str(p) in str(e.value) and words in str(e.value)


def test_missing_file_named(tmp_path):
    with pytest.raises(NxError) as e:
        profile.read(tmp_path / "none.json")
    assert "none.json" in str(e.value)


def test_blocks_to_lines():
    fns = profile.functions_of(C)
    assert [(n, f) for n, f, _ in fns] == [("I_2000", 3), ("F_1000", 10)]
    text, nf, nb = profile.sample_profile(C, {0x1000: 100, 0x1008: 60, 0x1020: 40, 0x1030: 100, 0x2000: 40, 0x2010: 40})
    assert (nf, nb) == (2, 6)
    recs = dict(re.findall(r"^(\w+):\d+:\d+\n((?: .*\n)*)", text, re.M))
    # F_1000 starts on line 10: L_1008's lines 15-17 are offsets 5-7, L_1020's line 19 offset 9
    f = dict(tuple(map(int, ln.split(":"))) for ln in recs["F_1000"].split("\n") if ln)
    assert f[3] == 100 and f[5] == f[6] == f[7] == 60 and f[9] == 40 and f[11] == 100
    assert 1 not in f  # the locals' line before the first label: no block
    # a block count round-trips through the lines it fills
    lines = {10 + off: n for off, n in f.items()}
    assert profile.blocks_from_lines(C, lines) == {0x1000: 100, 0x1008: 60, 0x1020: 40, 0x1030: 100}


def test_clang_applies_it(tmp_path):
    """clang reads the profile: the entry count and the branch weights come from the blocks."""
    src = tmp_path / "s.c"
    src.write_text(C)
    text, _, _ = profile.sample_profile(C, {0x1000: 1000, 0x1008: 990, 0x1020: 10, 0x1030: 1000, 0x2000: 10, 0x2010: 10})
    prof = tmp_path / "s.prof"
    prof.write_text(text)
    ll = tmp_path / "s.ll"
    cc.run(["-S", "-emit-llvm", "-O2", "-gline-tables-only", f"-fprofile-sample-use={prof}", "-o", str(ll), str(src)], "s.c")
    ir = ll.read_text()
    entry = re.search(r"define .*@F_1000\(.*!prof !(\d+)", ir)
    assert entry, "F_1000 has no entry count: the profile was not applied"
    assert re.search(rf'^!{entry[1]} = !{{!"function_entry_count", i64 100[01]}}', ir, re.M)
    weights = [tuple(map(int, w)) for w in re.findall(r'!"branch_weights", (?:!"expected", )?i32 (\d+), i32 (\d+)', ir)]
    assert any(max(w) > 50 * max(1, min(w)) for w in weights), weights
