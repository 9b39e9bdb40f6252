"""gpu_host package."""
