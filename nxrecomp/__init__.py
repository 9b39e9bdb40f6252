"""nxrecomp: common pieces shared by every process (settings, logging, the command line)."""
__version__ = "0.1.0"
