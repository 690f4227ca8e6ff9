"""``arena synth``'s generator: a deterministic, Hyperliquid-shaped recording. ``generate``
writes the file; the model is ``market`` (price), ``book`` (the book), ``feed`` (the
messages), ``coins`` (the built-in coins) and ``exact`` (platform-exact arithmetic).

May import: ``engine``, ``util``; no other room (nothing here knows the runner or a log
reader).
"""
