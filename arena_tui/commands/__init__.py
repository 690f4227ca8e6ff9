"""One module per ``arena`` command."""
