"""The NVN front end: the GPU API of our guest programs (examples/horizon_hello/sdk/nvn.h),
served by host functions.  Objects are registered with the GPU process through
``cpu_host.gpu_client`` (pools as memfds over the very guest pages, textures, samplers,
programs), command buffers are recorded host-side into GPU packets and submitted through the
shared-memory ring at queue flushes and presents."""
