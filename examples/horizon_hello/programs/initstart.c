/* initstart: a program shaped like one built with a newer Nintendo SDK: it exports
 * nn::init::Start(thread handle, argument address, notify_exception_handler_ready,
 * call_initializator), which the host calls as rtld does; Start calls the two callbacks (the
 * second runs the module initialisers), then the program's main, and returns. */
#include "hz_sdk.h"

static int inits_before_callback;
__attribute__((constructor)) static void ctor(void) { hz_printf("main initialiser\n"); }

void nn_init_Start(Handle thread, uintptr_t arg, void (*notify)(void), void (*initializator)(void))
    __asm__("_ZN2nn4init5StartEjmPFvvES2_");
void nn_init_Start(Handle thread, uintptr_t arg, void (*notify)(void), void (*initializator)(void)) {
    inits_before_callback = hz_sdk_init_order;
    hz_printf("nn::init::Start handle_ok=%d arg=%lx\n", thread != 0, (unsigned long)arg);
    notify();
    hz_printf("initialisers before the callback: %d\n", inits_before_callback);
    initializator();
    hz_printf("after the callback: sdk init %d\n", hz_sdk_init_order);
    initializator();          /* a second call runs nothing again */
    hz_printf("main returns\n");
}

int hz_main(void) { hz_printf("hz_main (wrong: the entry ran)\n"); return 0; }
