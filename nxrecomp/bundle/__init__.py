"""The bundle: the folder a recompiled program lives in, written by the recompiler and read by
the hosts.  This package owns its files (their names, formats, reading and writing), so neither
side imports the other to know them:

- ``manifest.json`` (``manifest.py``): what was built — kind (``linux-aarch64`` or ``horizon``),
  the program, the linked image, the function entries, build statistics, and per kind more
  (a Horizon bundle's process facts from the NPDM, modules, RomFS, GPU generation);
- ``image.bin`` (``image.py``): the linked image's bytes (segments, unwind tables), named in the
  manifest with their SHA-256; ``LinkedImage`` is its record;
- ``launch.txt`` (``launch.py``): what the native launcher ``nxrun`` of a Linux bundle maps and
  where (from the manifest's image and the memory map of ``memory_map.py``), or why it refuses
  to start;
- ``game.so`` (``recompiler/build.py``), ``nxrun`` (``cpu_host/launcher``), ``discovered_entries.txt``
  (``recompiler/discovered.py``) and ``src/`` (the lifted C) are written by their makers.
"""
