"""Daily review: spaced repetition of highlights over any `ScreviClient`.

Highlights are read through the client (embedded library, mirror or hosted API alike); the
schedule is FSRS's (`fsrs` on PyPI) and lives in a small SQLite state (`state.py`): inside
the library file for a library or a mirror, in a file of its own in hosted mode.
"""
