"""Every command of the app in one table: its keys, where they work, and its words.

The key bindings (of the app, the main screen, the editor, the chains pane and the kernel tables),
the footer, the help screen and the command palette are all generated from ``COMMANDS``, so they
never disagree. The app binds the commands that work on every screen (``priority``); the main
screen binds the rest of "anywhere" and "outside the editor", so that a screen over it has only its
own keys; the editor's, the chains pane's and the kernel tables' are their own.
Each key has one meaning outside the editor: the chains pane's own keys are used by no global
command, and the single letters of global commands are typed as text while the editor has focus.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from textual.binding import Binding, BindingType

if TYPE_CHECKING:
    from textual.app import SystemCommand
    from textual.dom import DOMNode

Where = Literal["anywhere", "outside the editor", "editor", "chains pane", "kernel table"]
WHERE_ORDER: tuple[Where, ...] = ("anywhere", "outside the editor", "editor", "chains pane", "kernel table")


@dataclass(frozen=True)
class Command:
    action: str
    """The ``action_<name>`` of whoever binds it: the app (``priority``), the main screen (the
    editor's escape too), or the chains pane."""
    keys: str
    """Textual key names, comma-separated; empty for a palette-only command."""
    label: str
    """The footer's word."""
    title: str
    """The command palette's title."""
    help: str
    """What it does, in one line (palette, help screen, tooltip)."""
    where: Where
    footer: bool = True
    palette: bool = True
    priority: bool = False
    binding_action: str | None = None
    """The action the binding runs when it is not the app's (a widget's own action)."""

    def key_text(self) -> str:
        return ", ".join(DISPLAY_KEYS.get(k, k) for k in self.keys.split(",")) if self.keys else ""


DISPLAY_KEYS = {"question_mark": "?", "delete": "del", "space": "space"}

COMMANDS: tuple[Command, ...] = (
    # anywhere
    Command("help", "f1", "Help", "Help", "every key, and where it works", "anywhere"),
    Command(
        "quit",
        "ctrl+q",
        "Quit",
        "Quit",
        "save the workspace, stop the worker, quit",
        "anywhere",
        footer=False,
        priority=True,
    ),
    Command(
        "interrupt",
        "ctrl+c",
        "Stop/quit",
        "Stop, or quit when idle",
        "stop the running request; quit when nothing runs",
        "anywhere",
        footer=False,
        palette=False,
        priority=True,
    ),
    Command("run_now", "ctrl+r", "Run now", "Run now", "measure the chain at N now, in every mode", "anywhere"),
    # outside the editor: single letters (typed as text while the editor has focus)
    Command(
        "open_workspace_source",
        "F",
        "File",
        "Source: run the workspace's file…",
        "run the function of your own file the workspace remembers, once its path is confirmed",
        "outside the editor",
        footer=False,
    ),
    Command("edit", "e,i", "Edit", "Edit", "back to the editor", "outside the editor", footer=False),
    Command("sweep", "s", "Sweep", "Run the sweep", "measure every size in the selected modes", "outside the editor"),
    Command("stop", "x", "Stop", "Stop", "cancel the running request", "outside the editor"),
    Command(
        "cycle_modes", "m", "Mode", "Mode: cycle", "both / eager / compiled / static vs dynamic", "outside the editor"
    ),
    Command(
        "cycle_compile_mode",
        "c",
        "Compile",
        "Compile mode: cycle",
        "default, max-autotune, reduce-overhead, dynamic",
        "outside the editor",
        footer=False,
    ),
    Command("cycle_dtype", "t", "Dtype", "Dtype: cycle", "fp32 / bf16 / fp16", "outside the editor", footer=False),
    Command(
        "cycle_device",
        "d",
        "Device",
        "Device: cycle",
        "each cuda:N, then cpu; with several (--device cpu,b:cpu), the one the kernel and sweep panes follow",
        "outside the editor",
        footer=False,
    ),  # in the footer with several devices (MainScreen.active_bindings)
    Command(
        "set_focus_size", "n", "N", "Size N…", "the size measured on every edit", "outside the editor", footer=False
    ),
    Command("set_sizes", "z", "Sizes", "Sweep sizes…", "the sizes of the sweep", "outside the editor", footer=False),
    Command(
        "set_reps", "r", "Reps", "Reps…", "timing reps per measurement (or auto)", "outside the editor", footer=False
    ),
    Command(
        "compare",
        "o",
        "Compare",
        "Compare",
        "side by side: this chain vs the marked one, else eager vs compiled",
        "outside the editor",
    ),
    Command(
        "cycle_chart",
        "g",
        "Chart",
        "Chart: cycle",
        "wall time / device time / GB/s",
        "outside the editor",
        footer=False,
    ),
    Command(
        "cycle_view", "v", "View", "View: cycle", "kernels / op chain / sweep (narrow screens)", "outside the editor"
    ),  # in the footer only where it works: on a compact screen
    Command(
        "toggle_chains",
        "l",
        "Chains",
        "Chains pane: show/hide",
        "the workspace's chains",
        "outside the editor",
        footer=False,
    ),
    Command(
        "export_json",
        "J",
        "JSON",
        "Export: JSON",
        "the results as a replayable report",
        "outside the editor",
        footer=False,
    ),
    Command("export_csv", "C", "CSV", "Export: CSV", "one row per kernel", "outside the editor", footer=False),
    Command(
        "export_trace",
        "T",
        "Trace",
        "Export: Chrome/Perfetto trace",
        "the measured calls as a trace",
        "outside the editor",
        footer=False,
    ),
    Command(
        "export_svg",
        "S",
        "Screenshot",
        "Export: SVG screenshot",
        "this screen as SVG",
        "outside the editor",
        footer=False,
    ),
    Command(
        "toggle_grad",
        "b",
        "Grad",
        "Grad: forward + backward on/off",
        "measure the backward pass too (from ones of the result's shape)",
        "outside the editor",
        footer=False,
    ),
    Command(
        "roofline",
        "f",
        "Roofline",
        "Roofline",
        "every kernel against the bandwidth and compute roofs",
        "outside the editor",
        footer=False,
    ),
    Command(
        "pin",
        "p",
        "Pin",
        "Baseline: pin this result",
        "later results of this chain show their deltas against it",
        "outside the editor",
        footer=False,
    ),
    Command(
        "unpin",
        "u",
        "Unpin",
        "Baseline: unpin",
        "forget this chain's pinned result",
        "outside the editor",
        footer=False,
    ),
    Command(
        "compare_pin",
        "w",
        "vs pin",
        "Compare: now vs the pin",
        "this chain's result beside its pinned one",
        "outside the editor",
        footer=False,
    ),
    Command(
        "help_key",
        "question_mark",
        "Help",
        "Help",
        "every key, and where it works",
        "outside the editor",
        footer=False,
        palette=False,
    ),
    Command(
        "quit_key",
        "q",
        "Quit",
        "Quit",
        "save the workspace, stop the worker, quit",
        "outside the editor",
        palette=False,
    ),
    # the editor
    Command(
        "leave_editor",
        "escape",
        "Results",
        "Results",
        "leave the editor: the single-letter keys work",
        "editor",
        palette=False,
    ),
    # the chains pane: keys that no global command uses
    Command("new_chain", "a", "Add", "Chain: new", "add an empty chain", "chains pane"),
    Command("rename_chain", "f2", "Rename", "Chain: rename", "rename the current chain", "chains pane"),
    Command("duplicate_chain", "y", "Duplicate", "Chain: duplicate", "copy the current chain", "chains pane"),
    Command(
        "delete_chain", "delete", "Delete", "Chain: delete", "delete the current chain (asks first)", "chains pane"
    ),
    Command(
        "mark_compare",
        "space",
        "Mark",
        "Compare: mark the highlighted chain",
        "the chain that o compares the current one with",
        "chains pane",
    ),
    # the kernel tables
    Command(
        "kernel_details",
        "enter",
        "Detail",
        "Kernel details",
        "full name and generated source",
        "kernel table",
        palette=False,
        binding_action="select_cursor",
    ),
)


def commands(where: Where) -> list[Command]:
    return [c for c in COMMANDS if c.where == where]


def _binding(c: Command, prefix: str = "") -> Binding:
    return Binding(
        c.keys, c.binding_action or prefix + c.action, c.label, show=c.footer, priority=c.priority, tooltip=c.help
    )


def bindings(where: Literal["editor", "chains pane", "kernel table"]) -> list[BindingType]:
    """The Textual bindings of a widget's commands (the editor's run on the main screen)."""
    prefix = "screen." if where == "editor" else ""
    return [_binding(c, prefix) for c in commands(where) if c.keys]


def app_bindings() -> list[BindingType]:
    """The commands that work on every screen (quit, stop): the app's."""
    return [_binding(c) for c in COMMANDS if c.priority and c.keys]


def screen_bindings() -> list[BindingType]:
    """The main screen's commands: off (neither run nor in a footer) while a screen is over it."""
    return [_binding(c) for c in [*commands("anywhere"), *commands("outside the editor")] if c.keys and not c.priority]


LETTER_ACTIONS = frozenset(c.action for c in commands("outside the editor"))
"""Commands whose keys are typed as text while the editor (or a dialog's input) has focus."""


def help_rows() -> list[tuple[str, str, str]]:
    """(keys, what, where) for the help screen, every command once per place it works."""
    rows: list[tuple[str, str, str]] = []
    for where in WHERE_ORDER:
        for c in commands(where):
            if c.keys:
                rows.append((c.key_text(), f"{c.title}: {c.help}" if c.title != c.label else c.help, where))
        if where == "anywhere":
            rows.append(("ctrl+p", "command palette: every action by name", where))
            rows.append(("tab, shift+tab", "move between panes", where))
    return rows


def palette(owners: Iterable[DOMNode]) -> Iterable[SystemCommand]:
    """One palette entry per command (the ones with a key say it), run by the first of ``owners``
    that has its action."""
    from textual.app import SystemCommand

    owners = tuple(owners)
    seen = set()
    for c in COMMANDS:
        if not c.palette or c.action in seen:
            continue
        seen.add(c.action)
        keys = ", ".join(x.key_text() for x in COMMANDS if x.action.removesuffix("_key") == c.action and x.keys)
        where = f" ({keys}{'' if c.where == 'anywhere' else ', ' + c.where})" if keys else ""
        owner = next(o for o in owners if hasattr(o, f"action_{c.action}"))
        yield SystemCommand(c.title, c.help + where, getattr(owner, f"action_{c.action}"))
