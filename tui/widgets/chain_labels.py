"""How the chains pane lists a chain: its name and its text's first line. Light (no panes), so
that the start screen lists the chains as the chains pane will."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from probes.link.safe_text import inert_line


@dataclass(frozen=True)
class ChainsState:
    chains: tuple[tuple[str, str], ...]
    """(name, text) of every chain."""
    current: int
    marked: int | None = None
    """The chain marked for compare (space), shown with a ◆."""


def first_line(text: str) -> str:
    """What a chain is listed by: its text's first line that is not blank, made inert."""
    return inert_line(next((line.strip() for line in text.splitlines() if line.strip()), "(empty)"))


def chain_label(state: ChainsState, index: int) -> Text:
    """Chain ``index``'s two lines: its name (bold where current, ◆ where marked), its text's first line."""
    name, text = state.chains[index]
    label = Text(no_wrap=True, overflow="ellipsis")
    label.append(inert_line(name), style="bold" if index == state.current else "")
    if index == state.marked:
        label.append(" ◆", style="bold magenta")
    label.append("\n")
    label.append(first_line(text), style="dim")
    return label
