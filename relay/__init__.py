"""The co-op UDP relay: rooms of up to 8 players, signed join tokens, a C fast path (docs/coop.md)."""
