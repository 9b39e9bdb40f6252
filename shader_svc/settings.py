"""Settings of the shader service (see nxrecomp/common/settings.py)."""

from __future__ import annotations

from nxrecomp.common.settings import Setting

SETTINGS = [
    Setting("shader_svc", "listen", "127.0.0.1:7461", "gRPC address of the shader service (HOST:PORT, port 0 = any)"),
    Setting("shader_svc", "cache_dir", "", "translation cache folder (empty: <nxrecomp.cache_dir>/shaders)"),
]
