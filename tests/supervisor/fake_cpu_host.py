"""A CPU host stand-in for ``nxrecomp run --cpu-cmd``: finds the GPU process through
NXRECOMP_GPU_SOCKET_DIR, draws a few frames of the box game, prints their hashes, exits."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "gpu_host"))

from cpu_host.gpu_client.client import GpuClient  # noqa: E402
from cpu_host.gpu_client.registry import TextureDesc  # noqa: E402
from cpu_host.gpu_client.shaders import GlslSource  # noqa: E402
from gpu_guest import COLOR_FS, COLOR_VS, BoxGame  # noqa: E402

frames = int(sys.argv[1]) if len(sys.argv) > 1 else 5
c = GpuClient(os.environ["NXRECOMP_GPU_SOCKET_DIR"], ring_capacity=1 << 20)
c.connect(timeout=30)
pool = c.create_pool(1, 1 << 20)
c.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
c.register(TextureDesc(7, 0, 0, BoxGame.W, BoxGame.H, "RGBA8", render_target=True))
g = BoxGame()
for f in range(1, frames + 1):
    g.step()
    c.wait(c.submit(g.commands(pool, f, 7)))
    print("frame", f, c.frame(f).sha256, flush=True)
c.close()
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
