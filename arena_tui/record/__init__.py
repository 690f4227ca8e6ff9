"""Recording Hyperliquid's feed: the socket loop with reconnects and backoff (``feed``), the
recorder that turns messages into daily logs (``recorder``), and its status line
(``status``); and getting past days from Hyperliquid's S3 archives (``arena fetch``): the
objects' layouts and parsers (``archive``), the plan, cost and download (``fetch``), a
day's log made of them (``assemble``).

May import: ``season``, ``logs``, ``engine``, ``util``; not ``run``, ``report`` or ``synth``.
"""
