"""Readable on a terminal of 16 colours (``TERM=xterm`` without ``COLORTERM``, ``TERM=screen``).

Textual draws in true colour; on such a terminal Rich brings each colour down to the nearest of
the 16 ANSI colours as it writes, so shades that read well in true colour can land on clashing
ones (footer keys bright red on grey at about 1.0:1, a black icon on a black field). On those
terminals the app adds ``SixteenColours`` after Textual's own line filters: it makes that step
itself, cell run by cell run, against xterm's palette, and where a text would read under
``MIN_CONTRAST`` (WCAG AA) on its background it writes the text in bright white or black,
whichever reads better there. Faint text is blended halfway into its background first, as xterm
draws it, then written without the faint attribute, so what the contrast is computed on is what
the terminal shows. ``NO_COLOR`` is Textual's: it turns every colour grey before this filter runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from rich.color import Color as RichColor
from rich.color import ColorType
from rich.console import Console
from rich.palette import Palette
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import TerminalTheme
from textual.color import Color
from textual.filter import LineFilter

XTERM_COLOURS: tuple[tuple[int, int, int], ...] = (
    (0, 0, 0),
    (205, 0, 0),
    (0, 205, 0),
    (205, 205, 0),
    (0, 0, 238),
    (205, 0, 205),
    (0, 205, 205),
    (229, 229, 229),
    (127, 127, 127),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (92, 92, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
)
"""xterm's default RGB for ANSI colours 0-15: what a 16-colour terminal most often shows."""
XTERM_THEME = TerminalTheme(XTERM_COLOURS[0], XTERM_COLOURS[7], list(XTERM_COLOURS[:8]), list(XTERM_COLOURS[8:]))
"""xterm's colours for a picture of the screen (``tui.screenshot --colours 16``)."""
BLACK, BRIGHT_WHITE = 0, 15
MIN_CONTRAST = 4.5
"""WCAG AA for text: every text on its background reads at least this (contrast ratio)."""

_PALETTE = Palette(list(XTERM_COLOURS))


def has_sixteen_colours(console: Console) -> bool:
    """Whether ``console`` writes 16 colours (Rich's "standard" system, chosen from ``TERM``)."""
    return console.color_system == "standard"


def relative_luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2's relative luminance of an sRGB colour."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2's contrast ratio of two colours, 1 to 21."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def ansi_number(color: RichColor | None, default: int) -> int:
    """The ANSI colour (0-15) ``color`` is shown as: its own number, else the nearest in xterm's
    palette; ``default`` for none (the terminal's own colour)."""
    if color is None or color.is_default:
        return default
    if color.type in (ColorType.STANDARD, ColorType.WINDOWS) and color.number is not None:
        return color.number
    return _PALETTE.match(tuple(color.get_truecolor()))


@lru_cache(maxsize=256)
def readable_text(fg: int, bg: int) -> int:
    """``fg`` where it reads on ``bg``, else bright white or black, whichever reads better."""
    if contrast(XTERM_COLOURS[fg], XTERM_COLOURS[bg]) >= MIN_CONTRAST:
        return fg
    bg_rgb = XTERM_COLOURS[bg]
    return max((BRIGHT_WHITE, BLACK), key=lambda c: contrast(XTERM_COLOURS[c], bg_rgb))


def _rgb(color: RichColor | None, fallback: int) -> tuple[int, int, int]:
    if color is None or color.is_default:
        return XTERM_COLOURS[fallback]
    if color.type in (ColorType.STANDARD, ColorType.WINDOWS) and color.number is not None:
        return XTERM_COLOURS[color.number]
    triplet = color.get_truecolor()
    return (triplet.red, triplet.green, triplet.blue)


@lru_cache(maxsize=4096)
def shown_colours(style: Style, background: int) -> tuple[int, int]:
    """(text, background) ANSI numbers a cell of ``style`` shows on a 16-colour terminal, reverse
    and faint included; ``background`` where the style has none."""
    fg_color, bg_color = (style.bgcolor, style.color) if style.reverse else (style.color, style.bgcolor)
    bg = ansi_number(bg_color, background)
    if style.dim:  # faint: halfway into the background, as xterm draws it
        (r, g, b), (br, bgr, bb) = _rgb(fg_color, BRIGHT_WHITE), XTERM_COLOURS[bg]
        fg = _PALETTE.match(((r + br) // 2, (g + bgr) // 2, (b + bb) // 2))
    else:
        fg = ansi_number(fg_color, BRIGHT_WHITE)
    return fg, bg


class SixteenColours(LineFilter):
    """Every cell in the ANSI colours a 16-colour terminal shows, each text readable on its
    background (see the module's docstring)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        base = ansi_number(background.rich_color, BLACK)
        out = []
        for text, style, control in segments:
            if control is not None or style is None:
                out.append(Segment(text, style, control))
                continue
            fg, bg = shown_colours(style, base)
            if text.strip():
                fg = readable_text(fg, bg)
            colours = Style(color=RichColor.from_ansi(fg), bgcolor=RichColor.from_ansi(bg), dim=False, reverse=False)
            out.append(Segment(text, style + colours, None))
        return out


FILTER = SixteenColours()


def with_sixteen_colours(console: Console, filters: Sequence[LineFilter]) -> Sequence[LineFilter]:
    """An app's line filters, ``SixteenColours`` last where ``console`` writes 16 colours."""
    return [*filters, FILTER] if has_sixteen_colours(console) else filters
