"""Every endpoint method of the client is routed by the mirror: a new one cannot slip past.

`MirroredClient` routes each client method by the mark the method carries (`client/marks.py`):
reads are answered from the copy, writes are sent to Screvi first. An unmarked endpoint would
be answered by the mirror's own embedded app, so a new write endpoint would change the copy
alone and the two would silently diverge. These tests make an unmarked endpoint fail.
"""

from __future__ import annotations

import inspect

from screvi_mcp.client import ScreviClient
from screvi_mcp.client.marks import endpoint_methods
from screvi_mcp.mirror.serving import MirroredClient

# Not endpoints: closing the client. (`iterate` is an async generator walking list methods.)
NOT_ENDPOINTS = {"aclose"}


def public_coroutines(cls: type) -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and inspect.iscoroutinefunction(member)
    }


def test_every_client_coroutine_is_a_marked_endpoint() -> None:
    unmarked = public_coroutines(ScreviClient) - NOT_ENDPOINTS - set(endpoint_methods(ScreviClient))
    assert not unmarked, (
        f"mark these client methods @reads, @writes or @fixed (client/marks.py): {unmarked}"
    )


def test_the_mirror_routes_each_endpoint_by_its_mark() -> None:
    for name, access in endpoint_methods(ScreviClient).items():
        routed = vars(MirroredClient).get(name)
        if access == "fixed":
            assert routed is None, f"{name}: a fixed answer is the copy's own"
        else:
            assert routed is not None, f"{name} ({access}) is not routed by MirroredClient"


def test_methods_named_as_writes_are_marked_writes() -> None:
    # A cross-check of the marks against the names: a create/update/delete/save/add/remove
    # method that were marked a read would change the copy and never reach Screvi.
    verbs = ("create_", "update_", "delete_", "save_", "add_", "remove_")
    marks = endpoint_methods(ScreviClient)
    misread = {name for name, access in marks.items() if name.startswith(verbs)}
    misread -= {name for name, access in marks.items() if access == "write"}
    assert not misread, f"these methods send writes but are not marked @writes: {misread}"


def test_the_mirrors_copy_rules_name_write_methods() -> None:
    # A write with no copy rule still reaches Screvi and comes back with the next sync; a
    # rule for a method that is not a write (renamed, or a read) would never run.
    from screvi_mcp.mirror.serving import _STORE

    writes = {name for name, access in endpoint_methods(ScreviClient).items() if access == "write"}
    assert set(_STORE) <= writes
