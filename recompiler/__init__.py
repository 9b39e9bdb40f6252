"""recompiler package."""
