"""The Horizon personality of the CPU host: run a recompiled ExeFS bundle with the kernel
(SVCs, threads on three virtual cores) served by ``cpu_host/runtime/horizon/horizon_kernel.c``."""
