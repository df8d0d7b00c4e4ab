"""The REST service: the spec's API as an ASGI app, its request pipeline, and the
in-process httpx seam. Storage lives in `local/storage`; nothing there imports from here."""
