"""Generate the gRPC/protobuf stubs of every ``proto/*.proto`` next to it (``python -m proto.gen``).

Stubs are generated at setup, not committed: they always match the .proto files and the pinned
grpcio-tools.  Imports inside generated ``*_pb2_grpc.py`` are rewritten to ``proto.x_pb2`` so the
stubs work as a package.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def generate() -> list[Path]:
    from grpc_tools import protoc
    import grpc_tools

    include = str(Path(grpc_tools.__file__).parent / "_proto")
    out = []
    for proto in sorted(HERE.glob("*.proto")):
        stem = proto.stem
        targets = [HERE / f"{stem}_pb2.py", HERE / f"{stem}_pb2_grpc.py"]
        if all(t.exists() and t.stat().st_mtime >= proto.stat().st_mtime for t in targets):
            continue
        rc = protoc.main(["protoc", f"-I{HERE}", f"-I{include}", f"--python_out={HERE}", f"--grpc_python_out={HERE}", str(proto)])
        if rc != 0:
            raise SystemExit(f"protoc failed on {proto}")
        g = HERE / f"{stem}_pb2_grpc.py"
        g.write_text(re.sub(r"^import (\w+_pb2) as", r"from proto import \1 as", g.read_text(), flags=re.M))
        out.append(proto)
    return out


if __name__ == "__main__":
    done = generate()
    if done:
        print("proto: generated " + ", ".join(p.name for p in done), file=sys.stderr)
