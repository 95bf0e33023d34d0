"""Keys applied in the order they were typed, whichever widget has the focus.

Textual hands each key to the widget that has the focus when the key is read, but resolves a key
binding only once the key's event has bubbled up to the app. Keys read together (over SSH or from
tmux they come in bursts) are all handed out before the first one's binding runs: in ``e`` + `` * 2``
from the kernel table, ``e`` moves the focus to the editor after the kernel table has been handed
`` * 2`` too, and drops it; in the editor, ``relu()`` + 6 backspaces + ``sigmoid()`` would apply
the backspaces last (printable keys are inserted at once). So a focusable widget runs a key's
binding as the key arrives, and a key that arrives after an earlier one moved the focus (or
opened a dialog, or closed one) goes where the focus is now.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget


def pass_on(widget: Widget, event: events.Key) -> bool:
    """Send ``event`` where the focus is now if an earlier key moved it away from ``widget``."""
    screen = widget.app.screen
    if screen is widget.screen and screen.focused is widget:
        return False
    event.stop()
    event.prevent_default()
    (screen.focused or screen).post_message(events.Key(event.key, event.character))
    return True


async def run_binding(widget: Widget, key: str) -> bool:
    """Run what ``key`` is bound to where the focus is, now; False if it is bound to nothing (or
    to a priority binding, which the app ran before handing the key out)."""
    active = widget.app.active_bindings.get(key)
    if active is None or not active.enabled or active.binding.priority:
        return False
    await widget.app.run_action(active.binding.action, active.node)
    return True


class KeysInOrder:
    """Mix into a focusable widget, before its Textual base (whose key handler runs after this one)."""

    def types(self, event: events.Key) -> bool:
        """True for a key that the widget takes as text (its Textual base inserts it)."""
        return False

    async def _on_key(self, event: events.Key) -> None:
        assert isinstance(self, Widget)
        focused = self.screen.focused
        if focused is not None and focused is not self and self in focused.ancestors:
            return  # bubbling up from the focused widget inside this one, which has handled it
        if pass_on(self, event) or self.types(event):
            return
        if await run_binding(self, event.key):
            event.stop()
            event.prevent_default()
