"""CPU-host side of the GPU transport: memory pools (memfds), the command ring writer, the
object registry and the gRPC control client.  The guest NVN front end calls into ``GpuClient``."""
