"""nxrecomp's own packages, by layer (docs/ARCHITECTURE.md, "Layers"): ``common`` (settings,
logging, errors, progress: beneath everything), ``bundle`` (the bundle's files, shared by the
recompiler and the hosts) and ``app`` (the ``nxrecomp`` commands, above everything)."""

__version__ = "0.1.0"
