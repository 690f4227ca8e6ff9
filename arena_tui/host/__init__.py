"""``arena host``: a hosted season over HTTP, the engine behind a log-then-apply core.

The pieces, one job each: ``session`` (the engine's one owner: every input is appended to
the log and fsynced before the engine applies it, in batches), ``views`` (what the API
reads besides the engine: fills, books, keys, score rows, stream subscribers, all derived
from the log), ``feeds`` and ``restamp`` (market data: the live feed, or a recorded log
played at a speed), ``app`` and ``answers`` (the HTTP API on Starlette), ``logserve``
(``GET /v1/log``: the durable log, by ranges), ``offload`` (large bodies sent from a
file by worker threads, off the loop), ``encoded`` (the public views as bytes, encoded
once per change), ``clients`` (the public endpoints' per-client limits), ``checkpoint``
(the engine's state beside the log, for a fast restart), ``schemas`` (a request body read
strictly) and ``openapi`` (the document describing the bodies), ``auth``, ``ratelimit``,
``store`` (SQLite score rows), ``lock`` and ``control`` (one server per log; registering
while it runs), ``register`` (``arena register``), ``plan`` (a log's season and market
source, checked on every start), ``server`` (wiring it all on uvicorn). See docs/api.md.

The API's bodies are ``arena_tui.wire``'s, the Structs its readers decode with too.

May import: ``run`` (the live feed as a line source), ``record`` (the socket loop),
``season``, ``logs``, ``wire`` (the API's bodies), ``engine``, ``util``; never ``tui``
(spectators come over HTTP) or ``commands``.
"""
