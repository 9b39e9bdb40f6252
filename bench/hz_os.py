"""Speed of nn::os served by the host (cpu_host/horizon/hle/os.py -> runtime/horizon_os.c).

Builds examples/horizon_hello/programs/os_bench.c into a bundle, runs it with ``nxrecomp
hz-run`` and prints ns per operation (measured by the guest with nn::os ticks: the best of 5
rounds of 4000, then the median over RUNS processes) and
the ratios against anchors in the same run: the guest SDK's own mutex (compare-and-swap in
guest code: what a mutex costs when no kernel is involved), a bare SVC round trip, a trivial
host function served in Python (nn::os::GetSystemTick: the floor of any Python-bound host call),
and the same event ping-pong between two threads through the kernel's SVCs.

    .venv/bin/python bench/hz_os.py [RUNS]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.horizon.hz_build import make_bundle, nxrecomp  # noqa: E402


def run_once(bundle: Path) -> dict[str, int]:
    r = nxrecomp("hz-run", str(bundle), timeout=600)
    if r.returncode != 0 or not r.stdout.endswith("done\n"):
        raise SystemExit(f"os_bench failed ({r.returncode}): {r.stderr[-2000:]}")
    return {k: int(v) for k, v in (line.split() for line in r.stdout.splitlines()[:-1])}


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as tmp:
        bundle = make_bundle("os_bench", Path(tmp))
        results = [run_once(bundle) for _ in range(runs)]
    med = {k: statistics.median(r[k] for r in results) for k in results[0]}
    for k, v in med.items():
        print(f"{k:24s} {v:8.0f} ns")
    print(f"nn::os Lock+Unlock / guest CAS Lock+Unlock:      {med['nnos_lock_unlock'] / med['guest_cas_lock_unlock']:.1f}")
    print(f"nn::os Lock+Unlock / Python host call floor x2:  {med['nnos_lock_unlock'] / (2 * med['host_call_python']):.2f}")
    print(f"Python host call / SVC round trip:               {med['host_call_python'] / med['svc_round_trip']:.1f}")
    print(f"nn::os event ping-pong / SVC event ping-pong:    {med['nnos_event_ping_pong'] / med['svc_event_ping_pong']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
