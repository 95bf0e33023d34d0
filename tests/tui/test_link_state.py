"""The worker link without an app: the client's states in, the status bar's words and the next
start out, in milliseconds."""

from __future__ import annotations

from tui.link_state import BACKOFF_S, MAX_FAILURES, WorkerLink

SSH_REFUSED = "the connection failed (ssh exit 255): ssh: connect to host x port 22: Connection refused"


def failing(link: WorkerLink, now: float, times: int) -> float:
    """``times`` starts that fail, each made as soon as it is due; the time of the last failure."""
    for _ in range(times):
        if link.down:
            now = link.retry_at
            assert link.due(now)
            link.starting()
        link.failed(SSH_REFUSED, now)
    return now


def test_the_first_start_says_starting_then_ready() -> None:
    link = WorkerLink()
    assert link.view(0.0).words == "starting worker (importing torch)" and link.view(0.0).why == ""
    link.starting()
    assert link.ready() is None
    assert link.view(1.0).words == "ready" and link.view(1.0, measuring=True).words == "busy"


def test_a_failed_start_counts_down_to_the_next_one_and_says_why_once() -> None:
    link = WorkerLink()
    link.failed(SSH_REFUSED, 10.0)
    view = link.view(10.0)
    assert view.phase == "failed" and link.down and not link.due(10.5)
    assert view.words == "no worker · retry in 1 s · ctrl+r: now"
    assert view.why == f"start 1 failed: {SSH_REFUSED}"
    assert link.due(11.0)
    link.starting()
    view = link.view(11.0)
    assert view.phase == "retrying" and view.words == "starting worker (attempt 2)" and not link.down
    link.failed(SSH_REFUSED, 11.5)
    view = link.view(11.5)
    assert view.words == "no worker · retry in 2 s · ctrl+r: now"
    assert view.why == f"start 2 failed: {SSH_REFUSED}"  # the current attempt's reason, once
    assert view.why.count("Connection refused") == 1


def test_a_link_that_comes_back_is_tried_again_within_two_seconds() -> None:
    link = WorkerLink()
    waits = []
    now = 0.0
    for _ in range(MAX_FAILURES - 1):
        now = failing(link, now, 1)
        waits.append(link.retry_at - now)
    assert waits[:2] == [1.0, 2.0]
    assert max(waits) == BACKOFF_S[-1] == 2.0


def test_after_too_many_failed_starts_it_gives_up_and_says_what_to_do() -> None:
    link = WorkerLink()
    now = failing(link, 0.0, MAX_FAILURES)
    view = link.view(now + 100)
    assert view.phase == "stopped" and link.down and not link.due(now + 10_000)
    assert "gave up" in view.words and "ctrl+r" in view.words and SSH_REFUSED in view.why


def test_a_start_that_cannot_work_gives_up_at_once_and_ctrl_r_tries_once_more() -> None:
    link = WorkerLink()
    why = "the worker speaks protocol 1, this app 3: install the same kernel-tui version where the worker runs"
    link.failed(why, 0.0, permanent=True)
    view = link.view(5.0)
    assert view.phase == "stopped" and view.why == why and not link.due(1e9)
    assert link.retry_now(6.0) and link.due(6.0)
    link.starting()
    link.failed(why, 7.0, permanent=True)
    assert link.view(8.0).phase == "stopped"


def test_ctrl_r_starts_at_once_only_while_no_worker_starts_or_answers() -> None:
    link = WorkerLink()
    assert not link.retry_now(0.0)  # the first start runs: a second one would race it
    link.failed(SSH_REFUSED, 0.0)
    assert link.retry_now(0.5) and link.due(0.5)  # no waiting for the countdown
    link.starting()
    assert not link.retry_now(0.6)
    assert link.ready() == "the worker is back"
    assert not link.down and link.view(0.0).why == ""


def test_a_lost_worker_is_said_while_it_is_replaced_and_the_replacement_once_ready() -> None:
    link = WorkerLink()
    link.ready()
    link.lost("the worker was killed by signal 9")
    link.restarting()
    link.starting()
    view = link.view(0.0)
    assert view.phase == "restarting" and view.words == "restarting worker (importing torch)"
    assert view.why == "lost: the worker was killed by signal 9"
    assert link.ready() == "the worker was killed by signal 9; replaced by a new worker"
    assert link.view(0.0).words == "ready" and link.view(0.0).why == ""


def test_a_restart_that_fails_is_never_said_done() -> None:
    """The restart after a loss fails: the bar says the start failed and when the next one is
    made, never "restarted" or "starting" while no process starts."""
    link = WorkerLink()
    link.ready()
    link.lost("the connection failed (ssh exit 255): Connection to x closed by remote host.")
    link.restarting()
    link.starting()
    link.failed(SSH_REFUSED, 5.0)
    view = link.view(5.0)
    assert view.phase == "failed" and "retry in" in view.words
    assert "closed by remote host" not in view.why  # the earlier process's last words are gone
    assert link.view(60.0).words == "no worker · retry in 1 s · ctrl+r: now"  # due: never a countdown below 1
    link.starting()
    assert link.ready() == "the worker is back"


def test_a_worker_replaced_after_its_request_failed_is_said_restarted_once_it_is() -> None:
    link = WorkerLink()
    link.ready()
    link.restarting()  # the request's failure said why, in its pane
    assert link.view(0.0).why == ""
    assert link.ready() == "the worker was restarted"
    assert link.ready() is None  # said once
