"""The audio renderer as Horizon runs it (``audren:u``), ``audout:u``-style buffer queues and the
host outputs (WAV file, SDL3 stream).  See README.md in this folder for the map."""
