"""The live loop's side of grad and static vs dynamic: what is requested, and what is cached."""

from __future__ import annotations

import dataclasses

from test_session import answer, sends, started


def test_grad_is_requested_and_keys_the_cache() -> None:
    session, request = started()
    answer(session, request, 1.0)
    changed = dataclasses.replace(session.settings, grad=True)
    [grad] = sends(session.settings_changed(changed, "grad", 2.0) + session.tick(2.0))
    assert grad.grad and not request.grad and grad.modes == ["eager", "compiled"]
    assert not any(v.fresh for v in session.focus_view(2.0).modes)  # forward-only rows are not grad rows
    assert session.focus_view(3.0).stale == "grad changed"
    answer(session, grad, 3.5)
    changed = dataclasses.replace(session.settings, grad=False)
    assert sends(session.settings_changed(changed, "grad", 4.0) + session.tick(4.0)) == []  # cached: shown at once
    assert all(v.fresh for v in session.focus_view(4.0).modes)


def test_static_and_dynamic_are_measured_side_by_side() -> None:
    session, request = started(modes=("compiled", "dynamic"))
    assert request.modes == ["compiled", "dynamic"]
    answer(session, request, 0.5)
    changed = dataclasses.replace(session.settings, modes=("max-autotune", "dynamic"))
    [again] = sends(session.settings_changed(changed, "compile mode", 1.0) + session.tick(1.0))
    assert again.modes == ["max-autotune"]  # the dynamic compile is the same one: cached; no eager asked
