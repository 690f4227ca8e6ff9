"""arena's shell around the pure ``engine``: rooms by capability, imports pointing one way.

Entry points (``cli.py``, ``commands/``, ``tui/``, ``host/``) use the capabilities
(``report/``, ``run/``, ``record/``, ``synth/``), which use the data (``season/``, then
``logs/``), which use ``engine``; ``util/`` (errors, formatting, paths, shared options) is
under all of them. ``strategy.py`` is the public API strategy files import; nothing in
this package imports it. ``.importlinter`` contracts in pyproject.toml keep it so.
"""
