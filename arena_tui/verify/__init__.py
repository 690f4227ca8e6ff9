"""``arena verify``: a hosted season checked from the outside, by anyone with its URL.

The pieces, one job each: ``remote`` (the host's public answers over HTTP: the season, its
file, the score rows, the log read from an offset with ``Range``), ``logreplay`` (the log
as far as it has been read: kept, hashed, decoded line by line and applied to one local
engine, the score rows it recomputes remembered by entry, day and mark), ``compare``
(published rows against recomputed ones: the first difference, or what the log does not
reach yet), ``verifier`` (the rounds: scores first, then the log, then the comparison;
once, or following the season until it is final). See docs/verify.md.

May import: ``run`` (the one spelling of a score row), ``season`` (the season loader, so
the rules hash is computed as everywhere else), ``logs`` (the line decoder), ``engine``,
``util``, ``wire`` (a published row's fields, by the API's names); never ``host`` (it
knows the host only as an HTTP client does), ``commands`` or ``tui``.
"""
