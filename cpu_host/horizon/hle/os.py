"""nn::os served by the host: threads, mutexes, condition variables, events, semaphores and
message queues.

The work is done in C (``cpu_host/runtime/horizon/horizon_os.c``) on the kernel's own threads and wait
queues, so the SVC path and this one follow the same rules: waiters are woken best priority
first (FIFO among equal priorities), a mutex holder runs at its best waiter's priority,
timeouts are nanoseconds (``nn::TimeSpan``).  Each function below is bound under its public
Itanium-mangled name (checked against clang's mangler in ``tests/horizon/test_horizon_os.py``)
and calls one ``nx_os_*`` entry point of ``game.so``; a waiting function gives its core back
inside the kernel (so none is a ``blocking`` host function here).  A broken precondition (a bad
pointer, an object never initialised, unlocking a mutex not held) ends the guest with a crash
report naming the function and the object.

Objects live in guest memory in our own layouts, each no larger than the SDK's public type
(horizon_os.c documents them): ThreadType 0x50 bytes, MutexType 0x20, ConditionVariableType 8,
EventType 0x10, SemaphoreType 0x10, MessageQueueType 0x20.  nn::os priorities 0..31 are kernel
priorities 28..59; a thread's stack must be 4 KiB aligned, a multiple of 4 KiB."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.registry import HostFunction

# (mangled name, readable signature, entry point in horizon_os.c)
FUNCTIONS: tuple[tuple[str, str, str], ...] = (
    (
        "_ZN2nn2os12CreateThreadEPNS0_10ThreadTypeEPFvPvES3_S3_mi",
        "nn::os::CreateThread(ThreadType*, ThreadFunction, void*, void*, size_t, int)",
        "create_thread",
    ),
    (
        "_ZN2nn2os12CreateThreadEPNS0_10ThreadTypeEPFvPvES3_S3_mii",
        "nn::os::CreateThread(ThreadType*, ThreadFunction, void*, void*, size_t, int, int)",
        "create_thread_core",
    ),
    ("_ZN2nn2os11StartThreadEPNS0_10ThreadTypeE", "nn::os::StartThread(ThreadType*)", "start_thread"),
    ("_ZN2nn2os10WaitThreadEPNS0_10ThreadTypeE", "nn::os::WaitThread(ThreadType*)", "wait_thread"),
    ("_ZN2nn2os13DestroyThreadEPNS0_10ThreadTypeE", "nn::os::DestroyThread(ThreadType*)", "destroy_thread"),
    ("_ZN2nn2os16GetCurrentThreadEv", "nn::os::GetCurrentThread()", "get_current_thread"),
    (
        "_ZN2nn2os20ChangeThreadPriorityEPNS0_10ThreadTypeEi",
        "nn::os::ChangeThreadPriority(ThreadType*, int)",
        "change_thread_priority",
    ),
    ("_ZN2nn2os17GetThreadPriorityEPKNS0_10ThreadTypeE", "nn::os::GetThreadPriority(const ThreadType*)", "get_thread_priority"),
    (
        "_ZN2nn2os24GetThreadCurrentPriorityEPKNS0_10ThreadTypeE",
        "nn::os::GetThreadCurrentPriority(const ThreadType*)",
        "get_thread_current_priority",
    ),
    ("_ZN2nn2os11YieldThreadEv", "nn::os::YieldThread()", "yield_thread"),
    ("_ZN2nn2os13SetThreadNameEPNS0_10ThreadTypeEPKc", "nn::os::SetThreadName(ThreadType*, const char*)", "set_thread_name"),
    (
        "_ZN2nn2os20GetThreadNamePointerEPKNS0_10ThreadTypeE",
        "nn::os::GetThreadNamePointer(const ThreadType*)",
        "get_thread_name_pointer",
    ),
    ("_ZN2nn2os20GetCurrentCoreNumberEv", "nn::os::GetCurrentCoreNumber()", "get_current_core_number"),
    (
        "_ZN2nn2os17SetThreadCoreMaskEPNS0_10ThreadTypeEim",
        "nn::os::SetThreadCoreMask(ThreadType*, int, Bit64)",
        "set_thread_core_mask",
    ),
    (
        "_ZN2nn2os17GetThreadCoreMaskEPiPmPKNS0_10ThreadTypeE",
        "nn::os::GetThreadCoreMask(int*, Bit64*, const ThreadType*)",
        "get_thread_core_mask",
    ),
    ("_ZN2nn2os15InitializeMutexEPNS0_9MutexTypeEbi", "nn::os::InitializeMutex(MutexType*, bool, int)", "initialize_mutex"),
    ("_ZN2nn2os13FinalizeMutexEPNS0_9MutexTypeE", "nn::os::FinalizeMutex(MutexType*)", "finalize_mutex"),
    ("_ZN2nn2os9LockMutexEPNS0_9MutexTypeE", "nn::os::LockMutex(MutexType*)", "lock_mutex"),
    ("_ZN2nn2os12TryLockMutexEPNS0_9MutexTypeE", "nn::os::TryLockMutex(MutexType*)", "try_lock_mutex"),
    ("_ZN2nn2os11UnlockMutexEPNS0_9MutexTypeE", "nn::os::UnlockMutex(MutexType*)", "unlock_mutex"),
    (
        "_ZN2nn2os28IsMutexLockedByCurrentThreadEPKNS0_9MutexTypeE",
        "nn::os::IsMutexLockedByCurrentThread(const MutexType*)",
        "is_mutex_locked_by_current_thread",
    ),
    (
        "_ZN2nn2os27InitializeConditionVariableEPNS0_21ConditionVariableTypeE",
        "nn::os::InitializeConditionVariable(ConditionVariableType*)",
        "initialize_condition_variable",
    ),
    (
        "_ZN2nn2os25FinalizeConditionVariableEPNS0_21ConditionVariableTypeE",
        "nn::os::FinalizeConditionVariable(ConditionVariableType*)",
        "finalize_condition_variable",
    ),
    (
        "_ZN2nn2os23SignalConditionVariableEPNS0_21ConditionVariableTypeE",
        "nn::os::SignalConditionVariable(ConditionVariableType*)",
        "signal_condition_variable",
    ),
    (
        "_ZN2nn2os26BroadcastConditionVariableEPNS0_21ConditionVariableTypeE",
        "nn::os::BroadcastConditionVariable(ConditionVariableType*)",
        "broadcast_condition_variable",
    ),
    (
        "_ZN2nn2os21WaitConditionVariableEPNS0_21ConditionVariableTypeEPNS0_9MutexTypeE",
        "nn::os::WaitConditionVariable(ConditionVariableType*, MutexType*)",
        "wait_condition_variable",
    ),
    (
        "_ZN2nn2os26TimedWaitConditionVariableEPNS0_21ConditionVariableTypeEPNS0_9MutexTypeENS_8TimeSpanE",
        "nn::os::TimedWaitConditionVariable(ConditionVariableType*, MutexType*, nn::TimeSpan)",
        "timed_wait_condition_variable",
    ),
    (
        "_ZN2nn2os15InitializeEventEPNS0_9EventTypeEbNS0_14EventClearModeE",
        "nn::os::InitializeEvent(EventType*, bool, EventClearMode)",
        "initialize_event",
    ),
    ("_ZN2nn2os13FinalizeEventEPNS0_9EventTypeE", "nn::os::FinalizeEvent(EventType*)", "finalize_event"),
    ("_ZN2nn2os11SignalEventEPNS0_9EventTypeE", "nn::os::SignalEvent(EventType*)", "signal_event"),
    ("_ZN2nn2os9WaitEventEPNS0_9EventTypeE", "nn::os::WaitEvent(EventType*)", "wait_event"),
    ("_ZN2nn2os12TryWaitEventEPNS0_9EventTypeE", "nn::os::TryWaitEvent(EventType*)", "try_wait_event"),
    (
        "_ZN2nn2os14TimedWaitEventEPNS0_9EventTypeENS_8TimeSpanE",
        "nn::os::TimedWaitEvent(EventType*, nn::TimeSpan)",
        "timed_wait_event",
    ),
    ("_ZN2nn2os10ClearEventEPNS0_9EventTypeE", "nn::os::ClearEvent(EventType*)", "clear_event"),
    (
        "_ZN2nn2os19InitializeSemaphoreEPNS0_13SemaphoreTypeEii",
        "nn::os::InitializeSemaphore(SemaphoreType*, int, int)",
        "initialize_semaphore",
    ),
    ("_ZN2nn2os17FinalizeSemaphoreEPNS0_13SemaphoreTypeE", "nn::os::FinalizeSemaphore(SemaphoreType*)", "finalize_semaphore"),
    ("_ZN2nn2os16AcquireSemaphoreEPNS0_13SemaphoreTypeE", "nn::os::AcquireSemaphore(SemaphoreType*)", "acquire_semaphore"),
    (
        "_ZN2nn2os19TryAcquireSemaphoreEPNS0_13SemaphoreTypeE",
        "nn::os::TryAcquireSemaphore(SemaphoreType*)",
        "try_acquire_semaphore",
    ),
    (
        "_ZN2nn2os21TimedAcquireSemaphoreEPNS0_13SemaphoreTypeENS_8TimeSpanE",
        "nn::os::TimedAcquireSemaphore(SemaphoreType*, nn::TimeSpan)",
        "timed_acquire_semaphore",
    ),
    ("_ZN2nn2os16ReleaseSemaphoreEPNS0_13SemaphoreTypeE", "nn::os::ReleaseSemaphore(SemaphoreType*)", "release_semaphore"),
    (
        "_ZN2nn2os16ReleaseSemaphoreEPNS0_13SemaphoreTypeEi",
        "nn::os::ReleaseSemaphore(SemaphoreType*, int)",
        "release_semaphore_n",
    ),
    (
        "_ZN2nn2os24GetCurrentSemaphoreCountEPKNS0_13SemaphoreTypeE",
        "nn::os::GetCurrentSemaphoreCount(const SemaphoreType*)",
        "get_current_semaphore_count",
    ),
    (
        "_ZN2nn2os22InitializeMessageQueueEPNS0_16MessageQueueTypeEPmm",
        "nn::os::InitializeMessageQueue(MessageQueueType*, uintptr_t*, size_t)",
        "initialize_message_queue",
    ),
    (
        "_ZN2nn2os20FinalizeMessageQueueEPNS0_16MessageQueueTypeE",
        "nn::os::FinalizeMessageQueue(MessageQueueType*)",
        "finalize_message_queue",
    ),
    (
        "_ZN2nn2os16SendMessageQueueEPNS0_16MessageQueueTypeEm",
        "nn::os::SendMessageQueue(MessageQueueType*, uintptr_t)",
        "send_message_queue",
    ),
    (
        "_ZN2nn2os19TrySendMessageQueueEPNS0_16MessageQueueTypeEm",
        "nn::os::TrySendMessageQueue(MessageQueueType*, uintptr_t)",
        "try_send_message_queue",
    ),
    (
        "_ZN2nn2os21TimedSendMessageQueueEPNS0_16MessageQueueTypeEmNS_8TimeSpanE",
        "nn::os::TimedSendMessageQueue(MessageQueueType*, uintptr_t, nn::TimeSpan)",
        "timed_send_message_queue",
    ),
    (
        "_ZN2nn2os15JamMessageQueueEPNS0_16MessageQueueTypeEm",
        "nn::os::JamMessageQueue(MessageQueueType*, uintptr_t)",
        "jam_message_queue",
    ),
    (
        "_ZN2nn2os18TryJamMessageQueueEPNS0_16MessageQueueTypeEm",
        "nn::os::TryJamMessageQueue(MessageQueueType*, uintptr_t)",
        "try_jam_message_queue",
    ),
    (
        "_ZN2nn2os20TimedJamMessageQueueEPNS0_16MessageQueueTypeEmNS_8TimeSpanE",
        "nn::os::TimedJamMessageQueue(MessageQueueType*, uintptr_t, nn::TimeSpan)",
        "timed_jam_message_queue",
    ),
    (
        "_ZN2nn2os19ReceiveMessageQueueEPmPNS0_16MessageQueueTypeE",
        "nn::os::ReceiveMessageQueue(uintptr_t*, MessageQueueType*)",
        "receive_message_queue",
    ),
    (
        "_ZN2nn2os22TryReceiveMessageQueueEPmPNS0_16MessageQueueTypeE",
        "nn::os::TryReceiveMessageQueue(uintptr_t*, MessageQueueType*)",
        "try_receive_message_queue",
    ),
    (
        "_ZN2nn2os24TimedReceiveMessageQueueEPmPNS0_16MessageQueueTypeENS_8TimeSpanE",
        "nn::os::TimedReceiveMessageQueue(uintptr_t*, MessageQueueType*, nn::TimeSpan)",
        "timed_receive_message_queue",
    ),
    (
        "_ZN2nn2os16PeekMessageQueueEPmPKNS0_16MessageQueueTypeE",
        "nn::os::PeekMessageQueue(uintptr_t*, const MessageQueueType*)",
        "peek_message_queue",
    ),
    (
        "_ZN2nn2os19TryPeekMessageQueueEPmPKNS0_16MessageQueueTypeE",
        "nn::os::TryPeekMessageQueue(uintptr_t*, const MessageQueueType*)",
        "try_peek_message_queue",
    ),
    (
        "_ZN2nn2os21TimedPeekMessageQueueEPmPKNS0_16MessageQueueTypeENS_8TimeSpanE",
        "nn::os::TimedPeekMessageQueue(uintptr_t*, const MessageQueueType*, nn::TimeSpan)",
        "timed_peek_message_queue",
    ),
)

OS_CDEF = "const char *nx_os_why(void);\n" + "".join(f"uint32_t nx_os_{c}(NxCpu *s);\n" for _m, _s, c in FUNCTIONS)


@dataclass
class OsService:
    """Binds the nn::os functions to horizon_os.c's entry points of the loaded game.so."""

    _entries: dict[int, dict[str, Any]] = field(default_factory=dict)  # id(lib) -> name -> C function
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _entry(self, c: Call, name: str) -> Any:
        fns = self._entries.get(id(c.lib))
        if fns is None:
            # declared on first use: the runner's FFI is only known once a guest calls
            with self._lock:
                fns = self._entries.get(id(c.lib))
                if fns is None:
                    c.ffi.cdef(OS_CDEF)
                    fns = {n: getattr(c.lib, f"nx_os_{n}") for _m, _s, n in FUNCTIONS}
                    self._entries[id(c.lib)] = fns
        return fns[name]

    def _impl(self, name: str) -> Callable[[Call], None]:
        def impl(c: Call) -> None:
            if self._entry(c, name)(c.cpu):
                raise GuestError(c.ffi.string(c.lib.nx_os_why()).decode("utf-8", "replace"))

        return impl

    def functions(self) -> list[HostFunction]:
        # bound natively (horizon_os.c's nx_os_native); the Python path stays for a game.so
        # built before it had them and as the reference the bench compares with
        return [HostFunction(m, sig, self._impl(n), native=n) for m, sig, n in FUNCTIONS]
