"""relay package."""
