"""jsontestrunner's training input for a profile-guided build (docs/PERFORMANCE.md): train.json in
the working folder, shaped unlike bench/cxx.py's big.json (another seed, nested arrays and objects,
long strings of escaped code points, floats and ints), so the training never is the measured input."""

import json, random

rng = random.Random(20261207)


def val(d):
    k = rng.random()
    if d > 4 or k < 0.3:
        return rng.choice([rng.randint(-(10**6), 10**6), rng.uniform(-1e9, 1e9), None, True, False])
    if k < 0.5:
        return "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(0, 40)))
    if k < 0.8:
        return [val(d + 1) for _ in range(rng.randint(0, 7))]
    return {f"k{rng.randint(0, 50)}_{j}": val(d + 1) for j in range(rng.randint(0, 5))}


data = [val(0) for _ in range(1500)]
open("train.json", "w").write(json.dumps(data, indent=3, ensure_ascii=True))
