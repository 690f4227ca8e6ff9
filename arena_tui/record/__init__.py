"""Recording Hyperliquid's feed: the socket loop with reconnects and backoff (``feed``), the
recorder that turns messages into daily logs (``recorder``), and its status line
(``status``).

May import: ``season``, ``logs``, ``engine``, ``util``; not ``run``, ``report`` or ``synth``.
"""
