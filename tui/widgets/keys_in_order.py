"""Keys applied in the order they were typed, whichever widget has the focus.

Textual hands each key to the widget that has the focus when the key is read, but resolves a key
binding only once the key's event has bubbled up to the app. Keys read together (over SSH or from
tmux they come in bursts) are all handed out before the first one's binding runs: in ``e`` + `` * 2``
from the kernel table, ``e`` moves the focus to the editor after the kernel table has been handed
`` * 2`` too, and drops it; in the editor, ``relu()`` + 6 backspaces + ``sigmoid()`` would apply
the backspaces last (printable keys are inserted at once). So a focusable widget runs a key's
binding as the key arrives, and a key that arrives after an earlier one moved the focus (or
opened a dialog, or closed one) goes where the focus is now.

Escape and a key read together (typed fast, or in one SSH packet) reach the app as one alt+key:
where nothing binds that alt+key, it is taken apart, escape, then the key, in the editor, in every
focusable widget and on every dialog (``ScreenKeysInOrder``).
"""

from __future__ import annotations

from textual import events
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget


def to_focus(node: DOMNode, key: str, character: str | None) -> None:
    """Hand a key to where the focus is now (the current screen when nothing has it)."""
    screen = node.app.screen
    (screen.focused or screen).post_message(events.Key(key, character))


def pass_on(node: Widget, event: events.Key) -> bool:
    """Send ``event`` where the focus is now if an earlier key moved it away from ``node`` (a
    focusable widget, or a dialog: one an earlier key closed)."""
    screen = node.app.screen
    if node is screen or (screen is node.screen and screen.focused is node):
        return False
    event.stop()
    event.prevent_default()
    to_focus(node, event.key, event.character)
    return True


async def split_escape_burst(node: DOMNode, event: events.Key) -> bool:
    """An alt+key that nothing binds, taken apart: escape's binding runs now, then the key goes
    where the focus is after it (a dialog escape closed is gone by then)."""
    key = event.key
    if not (key.startswith("alt+") and len(key) == 5 and event.character) or key in node.app.active_bindings:
        return False
    event.stop()
    event.prevent_default()
    await run_binding(node, "escape")
    to_focus(node, key[4:], event.character)
    return True


async def run_binding(widget: DOMNode, key: str) -> bool:
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

    async def on_key(self, event: events.Key) -> None:
        assert isinstance(self, Widget)
        focused = self.screen.focused
        if focused is not None and focused is not self and self in focused.ancestors:
            return  # bubbling up from the focused widget inside this one, which has handled it
        if pass_on(self, event) or await split_escape_burst(self, event) or self.types(event):
            return
        if await run_binding(self, event.key):
            event.stop()
            event.prevent_default()


class ScreenKeysInOrder:
    """Mix into a dialog, before its Textual base: keys read after one that closed it go where the
    focus is now, and escape read together with a key is both (also where the key comes up from
    a Textual widget inside, a button or a scroll, that binds neither)."""

    async def on_key(self, event: events.Key) -> None:
        assert isinstance(self, Screen)
        if not pass_on(self, event):
            await split_escape_burst(self, event)
