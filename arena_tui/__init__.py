"""arena's shell: the CLI, log files, season files and (later) the TUI, recorder and host."""
