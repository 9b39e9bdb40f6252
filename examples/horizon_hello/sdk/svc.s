// Horizon SVC wrappers of our own SDK.  Register conventions (public facts, switchbrew's SVC
// table): inputs in X0..X7 as the kernel names them, result code in W0, outputs from X1 on.
// Each wrapper takes its C arguments in the order that puts inputs where the kernel wants
// them; an output pointer is passed first (in X0, which the kernel overwrites with the
// result) and saved on the stack around the SVC.
.macro FUNC name
    .section .text.\name, "ax", %progbits
    .global \name
    .type \name, %function
    .align 2
\name:
.endm

// Result svcSetHeapSize(void **out_addr, u64 size)           in: X1 size; out: X1 address
FUNC svcSetHeapSize
    str x0, [sp, #-16]!
    svc 0x01
    ldr x2, [sp], #16
    str x1, [x2]
    ret

// Result svcQueryMemory(MemoryInfo *info, u32 *page_info, u64 addr)   in: X0 info, X2 addr; out: W1
FUNC svcQueryMemory
    str x1, [sp, #-16]!
    svc 0x06
    ldr x2, [sp], #16
    str w1, [x2]
    ret

// void svcExitProcess(void)
FUNC svcExitProcess
    svc 0x07
    ret

// Result svcCreateThread(Handle *out, void *entry, void *arg, void *stack_top, int prio, int core)
FUNC svcCreateThread
    str x0, [sp, #-16]!
    svc 0x08
    ldr x2, [sp], #16
    str w1, [x2]
    ret

// Result svcStartThread(Handle thread)
FUNC svcStartThread
    svc 0x09
    ret

// void svcExitThread(void)
FUNC svcExitThread
    svc 0x0A
    ret

// void svcSleepThread(s64 ns)
FUNC svcSleepThread
    svc 0x0B
    ret

// Result svcGetThreadPriority(s32 *out, Handle thread)       in: W1 handle; out: W1
FUNC svcGetThreadPriority
    str x0, [sp, #-16]!
    svc 0x0C
    ldr x2, [sp], #16
    str w1, [x2]
    ret

// Result svcSetThreadPriority(Handle thread, u32 prio)
FUNC svcSetThreadPriority
    svc 0x0D
    ret

// Result svcGetThreadCoreMask(s32 *core, u64 *mask, Handle thread)   in: W2; out: W1 core, X2 mask
FUNC svcGetThreadCoreMask
    stp x0, x1, [sp, #-16]!
    svc 0x0E
    ldp x3, x4, [sp], #16
    str w1, [x3]
    str x2, [x4]
    ret

// Result svcSetThreadCoreMask(Handle thread, s32 ideal_core, u64 mask)
FUNC svcSetThreadCoreMask
    svc 0x0F
    ret

// u32 svcGetCurrentProcessorNumber(void)
FUNC svcGetCurrentProcessorNumber
    svc 0x10
    ret

// Result svcCloseHandle(Handle h)
FUNC svcCloseHandle
    svc 0x16
    ret

// Result svcWaitSynchronization(s32 *index, const Handle *handles, s32 count, s64 timeout_ns)
FUNC svcWaitSynchronization
    str x0, [sp, #-16]!
    svc 0x18
    ldr x2, [sp], #16
    str w1, [x2]
    ret

// Result svcArbitrateLock(Handle owner, u32 *mutex, Handle requester)
FUNC svcArbitrateLock
    svc 0x1A
    ret

// Result svcArbitrateUnlock(u32 *mutex)
FUNC svcArbitrateUnlock
    svc 0x1B
    ret

// Result svcWaitProcessWideKeyAtomic(u32 *mutex, u32 *key, Handle tag, s64 timeout_ns)
FUNC svcWaitProcessWideKeyAtomic
    svc 0x1C
    ret

// void svcSignalProcessWideKey(u32 *key, s32 count)
FUNC svcSignalProcessWideKey
    svc 0x1D
    ret

// u64 svcGetSystemTick(void)
FUNC svcGetSystemTick
    svc 0x1E
    ret

// void svcBreak(u32 reason, u64 address, u64 size)
FUNC svcBreak
    svc 0x26
    ret

// Result svcOutputDebugString(const char *text, u64 size)
FUNC svcOutputDebugString
    svc 0x27
    ret

// Result svcGetInfo(u64 *out, u32 id0, Handle handle, u64 id1)   in: W1, W2, X3; out: X1
FUNC svcGetInfo
    str x0, [sp, #-16]!
    svc 0x29
    ldr x2, [sp], #16
    str x1, [x2]
    ret

// Result svcWaitForAddress(void *addr, u32 type, s32 value, s64 timeout_ns)
FUNC svcWaitForAddress
    svc 0x34
    ret

// Result svcSignalToAddress(void *addr, u32 type, s32 value, s32 count)
FUNC svcSignalToAddress
    svc 0x35
    ret

// Result svcCreateEvent(Handle *writable, Handle *readable)      out: W1 writable, W2 readable
FUNC svcCreateEvent
    stp x0, x1, [sp, #-16]!
    svc 0x45
    ldp x3, x4, [sp], #16
    str w1, [x3]
    str w2, [x4]
    ret

// Result svcSignalEvent(Handle writable)
FUNC svcSignalEvent
    svc 0x11
    ret

// Result svcClearEvent(Handle either)
FUNC svcClearEvent
    svc 0x12
    ret

// Result svcResetSignal(Handle readable)
FUNC svcResetSignal
    svc 0x17
    ret

// Result svcSetMemoryPermission(void *addr, u64 size, u32 perm)
FUNC svcSetMemoryPermission
    svc 0x02
    ret

// Result svcSetMemoryAttribute(void *addr, u64 size, u32 mask, u32 attr)
FUNC svcSetMemoryAttribute
    svc 0x03
    ret

// Result svcMapMemory(void *dst, void *src, u64 size)
FUNC svcMapMemory
    svc 0x04
    ret

// Result svcUnmapMemory(void *dst, void *src, u64 size)
FUNC svcUnmapMemory
    svc 0x05
    ret

// Result svcMapPhysicalMemory(void *addr, u64 size)
FUNC svcMapPhysicalMemory
    svc 0x2C
    ret

// Result svcUnmapPhysicalMemory(void *addr, u64 size)
FUNC svcUnmapPhysicalMemory
    svc 0x2D
    ret

// ---- sessions, IPC and shared memory (switchbrew SVC table: 0x13-0x15, 0x1F, 0x21, 0x22,
// 0x24, 0x28, 0x51, 0x52) ----

// Result svcConnectToNamedPort(Handle *out, const char *name)   in: X1 name; out: W1
FUNC svcConnectToNamedPort
    str x0, [sp, #-16]!
    svc 0x1F
    ldr x2, [sp], #16
    str w1, [x2]
    ret

// Result svcSendSyncRequest(Handle session)   the message is the first 0x100 bytes of the TLS
FUNC svcSendSyncRequest
    svc 0x21
    ret

// Result svcSendSyncRequestWithUserBuffer(void *buf, u64 size, Handle session)
FUNC svcSendSyncRequestWithUserBuffer
    svc 0x22
    ret

// Result svcMapSharedMemory(Handle h, void *addr, u64 size, u32 perm)
FUNC svcMapSharedMemory
    svc 0x13
    ret

// Result svcUnmapSharedMemory(Handle h, void *addr, u64 size)
FUNC svcUnmapSharedMemory
    svc 0x14
    ret

// Result svcCreateTransferMemory(Handle *out, void *addr, u64 size, u32 perm)   out: W1
FUNC svcCreateTransferMemory
    str x0, [sp, #-16]!
    svc 0x15
    ldr x2, [sp], #16
    str w1, [x2]
    ret

// Result svcMapTransferMemory(Handle h, void *addr, u64 size, u32 perm)
FUNC svcMapTransferMemory
    svc 0x51
    ret

// Result svcUnmapTransferMemory(Handle h, void *addr, u64 size)
FUNC svcUnmapTransferMemory
    svc 0x52
    ret

// Result svcGetProcessId(u64 *out, Handle h)   in: W1; out: X1
FUNC svcGetProcessId
    str x0, [sp, #-16]!
    svc 0x24
    ldr x2, [sp], #16
    str x1, [x2]
    ret

// Result svcGetThreadId(u64 *out, Handle h)   in: W1; out: X1
FUNC svcGetThreadId
    str x0, [sp, #-16]!
    svc 0x25
    ldr x2, [sp], #16
    str x1, [x2]
    ret

// void svcReturnFromException(Result r)
FUNC svcReturnFromException
    svc 0x28
    ret
