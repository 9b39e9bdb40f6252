"""The nn:: SDK served by host code, at the function level (Horizon issue #5).

A recompiled ExeFS calls SDK functions by name.  Names no module defines were bound by the
linker (``recompiler/horizon.py``) to slots of the host-import region; names the ``sdk``
module does define may be overridden.  At start-up the runner binds, for every name served
here, a host function at that address (``cpu_host/runtime/core/dispatch.c``'s ``nx_host_bind``):
every indirect call or PLT call to it runs the Python function below.

Modules, one service each: ``fs`` (RomFS read-only, save data with all-or-nothing commits in
``savedata``), ``clock`` (nn::os ticks, nn::time), ``hid`` (npad and keyboard state: scripted
input for headless runs, live input from the GPU process's window), ``system`` (settings, oe
/applet, err).  ``abi`` reads arguments and guest memory; ``registry`` collects the functions
and binds them.  Names are the public Itanium-mangled names of the SDK's entry points (the
symbol names any game's dynamic symbol table shows); signatures follow the public API
documentation of homebrew projects.  No Nintendo code or header is used.
"""
