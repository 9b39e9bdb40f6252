"""The Linux AArch64 user-mode personality's Python side: the initial process stack and the
guest memory map of a linked program (the system calls themselves are in
cpu_host/runtime/linux/linux_syscalls.c)."""
