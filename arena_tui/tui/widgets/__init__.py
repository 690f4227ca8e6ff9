"""The panels of arena-tui, one module per feature."""
