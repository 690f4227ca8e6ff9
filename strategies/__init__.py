"""arena's baseline strategies and examples (each file is a strategy; see docs/strategies.md)."""
