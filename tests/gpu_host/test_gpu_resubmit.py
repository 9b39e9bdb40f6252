"""A submission that finds the GPU process dead is replayed exactly once by the restarted one.

``GpuClient.submit`` notices the dead process (its fd socket hung up), re-attaches and writes
every pending submission, this one included, into the new process's ring.  The submit must not
then write it a second time: the second copy would be replayed after the first one completed,
when the caller may already be reusing what it reads (the framebuffer present pool's slot, into
which the guest's next frame is being copied: a torn frame, seen as frame 3 holding frame 6's
pixels in tests/horizon/test_framebuffer_present.py's GPU-kill test).  Real GPU process
(lavapipe), real sockets; the count is the restarted process's own (GetStatus.submissions).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np

from gpu_guest import frame_image
from test_gpu_blob_ring import env, expected, scene  # noqa: F401 (env: the module fixture)


def test_submit_after_a_gpu_process_death_is_replayed_once(env):  # noqa: F811
    gpu = env[0]
    c = gpu.client
    n = next(gpu.frames)
    c.wait(c.submit(scene(env, n)), timeout=30)
    assert np.array_equal(frame_image(c, n), expected())
    assert not c.pending

    os.kill(gpu.proc.pid, signal.SIGKILL)
    gpu.proc.wait()
    env_vars = {**os.environ, "NXRECOMP_GPU_HOST_WINDOW": "off", "NXRECOMP_GPU_HOST_FRAMES_DIR": str(gpu.frames_dir)}
    with open(os.path.join(gpu.dir, "gpu.log"), "a") as logf:
        gpu.proc = subprocess.Popen([sys.executable, "-m", "gpu_host.server", "--socket-dir", gpu.dir], env=env_vars, stderr=logf)
    reconnects = c.reconnects
    n = next(gpu.frames)
    seq = c.submit(scene(env, n))  # the Python path: finds the process dead, re-attaches
    assert c.reconnects == reconnects + 1
    m = next(gpu.frames)
    last = c.submit(scene(env, m))  # a marker: every record before it has been replayed with it
    c.wait(last, timeout=60)
    assert seq < last
    st = c.status()
    # two submissions written into the new process's ring; the old client wrote the first twice
    assert st.submissions == 2 and st.dropped == 0, (st.submissions, st.dropped)
    assert np.array_equal(frame_image(c, n), expected()) and np.array_equal(frame_image(c, m), expected())
