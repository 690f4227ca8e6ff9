"""One module per ``arena`` command: options in, one call into the capabilities, output out.

A command parses and checks its options, calls ``run/``, ``report/``, ``record/``,
``synth/``, ``host/``, ``season/`` or ``logs/``, and prints (people on stderr, results
and ``--json`` on stdout). Nothing below imports a command, and no command imports
``tui/``: ``--tui`` reaches the screen through :mod:`arena_tui.commands.screens`, which
``cli.py`` fills in.
"""
