"""Lease holders name their process (appliance/common/holders.py): a lease held by a process of
this host that no longer runs (gone, a zombie, or its pid reused) is free at once; a lease of
another host, or of a holder in an older form, expires as before (issue 26, item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

from appliance.common import clock, holders
from appliance.common.jobs import LeasedQueue
from appliance.common.lease import held_by_another
from appliance.dispatch.db import database
from appliance.dispatch.models import OutgoingMail


def _dead_holder() -> str:
    """The holder name of a process of this host that has exited and been reaped."""
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "from appliance.common.holders import process_holder; print(process_holder())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return child.stdout.strip()


def test_this_process_is_named_by_host_pid_and_start_time_and_is_not_gone() -> None:
    mine = holders.process_holder()
    host, pid, start = mine.split("/")
    assert host.startswith(holders.socket.gethostname()[:10].replace("_", "-")) and "~" in host
    assert pid == str(os.getpid()) and start.isdigit()
    assert not holders.holder_gone(mine)
    assert holders.instance_holder().startswith(mine + "/")
    assert not holders.holder_gone(holders.instance_holder())


def test_a_process_of_this_host_that_exited_is_gone() -> None:
    dead = _dead_holder()
    assert dead.startswith(holders.host_prefix())
    assert holders.holder_gone(dead)
    assert holders.holder_gone(dead + "/abcd1234")  # a single-holder lease's instance


def test_a_pid_that_now_belongs_to_a_process_started_at_another_time_is_gone() -> None:
    host, pid, start = holders.process_holder().split("/")
    assert holders.holder_gone(f"{host}/{pid}/{int(start) - 1}")


def test_a_zombie_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        holder = f"{holders.host_prefix()}{child.pid}/{holders.start_time(child.pid) or 0}"
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
        assert holders.start_time(child.pid) is None
        assert holders.holder_gone(holder)
    finally:
        child.wait()


def test_holders_of_another_host_or_in_an_older_form_are_never_judged_gone() -> None:
    dead = _dead_holder()
    _, pid, start = dead.split("/")
    assert not holders.holder_gone(f"elsewhere~0123abcd/{pid}/{start}")
    assert not holders.holder_gone(f"{pid}:1a2b3c4d")  # the pid:uuid of earlier versions
    assert not holders.holder_gone(None) and not holders.holder_gone("")


def test_a_single_holder_lease_of_a_dead_process_of_this_host_is_free_at_once() -> None:
    moment = clock.now()
    later = moment + timedelta(seconds=30)
    mine = holders.instance_holder()
    assert held_by_another(holders.instance_holder(), later, moment, mine)  # alive: wait
    assert not held_by_another(_dead_holder() + "/abcd1234", later, moment, mine)  # dead: take it
    assert held_by_another("elsewhere~0123abcd/1/2/abcd1234", later, moment, mine)  # another host
    assert not held_by_another("elsewhere~0123abcd/1/2/abcd1234", moment, moment, mine)  # expired


def _queue() -> LeasedQueue:
    return LeasedQueue(
        OutgoingMail, database, pending=lambda: OutgoingMail.status == "queued", lease=timedelta(minutes=1)
    )


def test_a_claim_records_the_holder_and_takes_over_rows_leased_by_a_dead_process_at_once(
    dispatch_app,
) -> None:
    with dispatch_app.app_context():
        ids = [OutgoingMail.create(to_address=f"m{n}@example.am", subject="s", body="b").id for n in range(4)]
        queue = _queue()
        assert queue.claim(10) == ids
        assert {r.lease_holder for r in OutgoingMail.select()} == {holders.process_holder()}
        assert queue.claim(10) == []  # held by this live process: not due
        later = clock.now() + timedelta(minutes=1)
        OutgoingMail.update(lease_holder=_dead_holder()).where(OutgoingMail.id.in_(ids[:2])).execute()
        OutgoingMail.update(lease_holder="elsewhere~0123abcd/1/2").where(OutgoingMail.id == ids[2]).execute()
        assert queue.claim(10) == ids[:2]  # the dead holder's, before its lease ends
        assert all(OutgoingMail.get_by_id(i).lease_until >= later - timedelta(seconds=5) for i in ids[:2])
        clock.advance(timedelta(minutes=2))
        assert queue.claim(10) == ids  # every lease expired, the other host's too


def test_released_and_retried_rows_forget_their_holder(dispatch_app) -> None:
    with dispatch_app.app_context():
        first, second = (
            OutgoingMail.create(to_address=f"m{n}@example.am", subject="s", body="b").id for n in range(2)
        )
        queue = _queue()
        assert queue.claim(10) == [first, second]
        queue.release(first, after=timedelta(seconds=1))
        queue.retry_later(second, "failed")
        assert [r.lease_holder for r in OutgoingMail.select()] == [None, None]
