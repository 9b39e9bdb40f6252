"""Horizon IPC served by the CPU host: the server side of every session a guest opens.

A guest talks to a system service by writing a HIPC message into its thread-local region
(0x100 bytes at TPIDRRO_EL0, or a user buffer) and calling ``svcSendSyncRequest`` on a session
handle; the reply comes back in the same bytes.  Here the kernel (``horizon_kernel.c``) hands
those SVCs to ``kernel.KernelBridge`` on the calling guest thread; ``hipc`` reads and writes the
message envelope (handles, PID, X/A/B/W/C buffer descriptors, data words), ``cmif`` the
request/reply inside it (SFCI/SFCO headers, domains, control commands), ``tipc`` the newer
sm: form, ``dispatcher`` routes a request to one ``Interface`` subclass per service interface
by its table of command ids.  The services themselves live in ``cpu_host/horizon/services``.

Sources of facts (read, never copied): switchbrew's IPC_Marshalling, SVC and Error_codes
pages; libnx's ``sf/hipc.h``, ``sf/cmif.h``, ``sf/tipc.h`` (message layouts);
Atmosphère's result definitions (``svc``, ``sf``, ``sf::hipc``, ``sm`` modules).
"""
