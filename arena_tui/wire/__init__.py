"""The words the host and its readers exchange over HTTP: the API's bodies, declared once.

Why this room exists: ``arena host`` encodes its answers from these Structs, and arena-tui's
spectator and ``arena verify`` read what a host serves by the very same ones, so the two
ends of the wire cannot drift apart and no reader keeps a second copy under other names.
``api`` holds the Structs (requests, answers, score pages, books); the host's strict
reading of a request and the OpenAPI document built from the Structs stay in ``host``.

May import: ``util`` and ``engine`` (the events' quote Structs a fill carries); never
``host``, ``tui`` or ``verify`` (they import it, and through it still know each other only
over HTTP), nor anything between.
"""
