"""shader_svc package."""
