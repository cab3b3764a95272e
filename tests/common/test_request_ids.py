"""Request ids made without a system call per request: unique, uuid-shaped, and drawn afresh by a
forked serving process."""

from __future__ import annotations

import os
import re

from appliance.common.webapp import _RequestIds


def test_request_ids_are_unique_and_shaped_like_a_uuids_hex() -> None:
    ids = _RequestIds()
    made = [ids() for _ in range(10_000)]
    assert len(set(made)) == len(made)
    assert all(re.fullmatch(r"[0-9a-f]{32}", rid) for rid in made)


def test_two_processes_never_share_a_request_id_prefix() -> None:
    ids = _RequestIds()
    parent = ids()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write_end, ids().encode())
        finally:
            os._exit(0)
    os.close(write_end)
    child = os.read(read_end, 64).decode()
    os.waitpid(pid, 0)
    os.close(read_end)
    assert len(child) == 32 and child[:16] != parent[:16]


def test_a_client_sent_request_id_is_kept_and_a_made_one_is_answered(dispatch_client) -> None:
    kept = dispatch_client.get("/healthz", headers={"X-Request-Id": "req-12345678"})
    assert kept.headers["X-Request-Id"] == "req-12345678"
    made = dispatch_client.get("/healthz").headers["X-Request-Id"]
    assert re.fullmatch(r"[0-9a-f]{32}", made)
