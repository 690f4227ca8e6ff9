"""The words the host and its readers exchange over HTTP: the API's bodies, declared once.

Why this room exists: ``arena host`` encodes its answers from these Structs, and arena-tui's
spectator and ``arena verify`` decode what a host serves with the very same ones, so the
two ends of the wire cannot drift apart and no reader keeps a second copy under other
names. It sits below ``host``, ``tui`` and ``verify`` and imports none of them (it knows
only the engine's event vocabulary), so the screens and the host still know each other
only over HTTP. ``arena_tui.wire.api`` holds the Structs; the host's strict request
decoding and the OpenAPI document built from them stay in ``arena_tui.host``.
"""
