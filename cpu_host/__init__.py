"""cpu_host package."""
