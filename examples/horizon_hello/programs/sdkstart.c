/* sdkstart: a program shaped like one built with the older Nintendo SDK (it exports nnMain and
 * the start-up functions rtld calls: public names from open-source rtld reimplementations).
 * With rtld dropped the host must call them as rtld would: __nnDetailInitLibc0, nnosInitialize
 * (main thread handle, argument address), __nnDetailInitLibc1, nndiagStartup,
 * nninitInitializeSdkModule, nninitInitializeAbortObserver, nninitStartup, __nnDetailInitLibc2,
 * the module initialisers, nnMain, nninitFinalizeSdkModule, nnosQuickExit, then ExitProcess. */
#include "hz_sdk.h"

static Handle main_handle;
static void say(const char *what) { hz_printf("%s\n", what); }

void __nnDetailInitLibc0(void) { say("__nnDetailInitLibc0"); }
void nnosInitialize(Handle thread, uintptr_t arg) {
    main_handle = thread;
    *(volatile Handle *)(({ uintptr_t v; __asm__ volatile("mrs %0, tpidrro_el0" : "=r"(v)); v; }) + HZ_TLS_HANDLE_OFFSET) = thread;
    hz_printf("nnosInitialize handle_ok=%d arg=%lx\n", thread != 0 && thread == hz_self(), (unsigned long)arg);
}
void __nnDetailInitLibc1(void) { say("__nnDetailInitLibc1"); }
void nndiagStartup(void) { say("nndiagStartup"); }
void nninitInitializeSdkModule(void) { say("nninitInitializeSdkModule"); }
void nninitInitializeAbortObserver(void) { say("nninitInitializeAbortObserver"); }
void nninitStartup(void) { say("nninitStartup"); }
void __nnDetailInitLibc2(void) { say("__nnDetailInitLibc2"); }
__attribute__((constructor)) static void ctor(void) { hz_printf("main initialiser (sdk's ran: %d)\n", hz_sdk_init_order); }
void nnMain(void) { hz_printf("nnMain on the main thread: %d\n", hz_self() == main_handle); }
void nninitFinalizeSdkModule(void) { say("nninitFinalizeSdkModule"); }
void nnosQuickExit(void) { say("nnosQuickExit"); }

/* never reached: the host starts the SDK's sequence, not the module's entry */
int hz_main(void) { say("hz_main (wrong: the entry ran)"); return 0; }
