"""One module per screen of arena-tui."""
