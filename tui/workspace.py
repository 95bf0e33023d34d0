"""The workspace: the user's op chains and settings, saved as JSON and restored at the next start.

The default file is ``workspace.json`` in the user's state directory (``KERNEL_TUI_STATE_DIR``
overrides it); ``kernel-tui --workspace FILE`` opens another. How a file is opened, locked and
kept from harm is ``tui.workspace_file``'s job. No torch, no textual.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probes.chain.matching import normalize
from probes.link.settings import COMPILED_MODES, DeviceEntry, SettingError, Settings, check_fleet
from probes.link.state_files import user_state_dir, write_private_file

VERSION = 1
WORKSPACE_FILE = "workspace.json"

MODE_CHOICES: tuple[str, ...] = ("both", "eager", "compiled", "static+dynamic")
"""What the mode toggle cycles through; ``compiled`` means the selected compile mode;
``static+dynamic`` sets the static compile mode beside the dynamic-shape one. The command line
speaks the measurement modes themselves (``eager,compiled``): see ``modes_toggle``."""
COMPILE_MODES: tuple[str, ...] = COMPILED_MODES
"""``compiled`` (torch.compile's default mode), ``max-autotune``, ``reduce-overhead``."""
CHART_VIEWS: tuple[str, ...] = ("time", "device", "gbps")
"""What the sweep chart plots: wall time, device time, or achieved GB/s."""

SEED_CHAINS: tuple[tuple[str, str], ...] = (
    ("add_relu", "(a + b).relu()"),
    ("add", "a + b"),
    ("gelu_mul", "F.gelu(a * b + c)"),
    ("softmax", "x: [N // 1024, 1024]\ntorch.softmax(x, dim=-1)"),
)


def modes_toggle(modes: Sequence[str]) -> tuple[str, str | None]:
    """The toggle and compile mode that measure ``modes`` (checked names, as ``kernel-tui profile
    --modes`` takes them): ``eager,max-autotune`` -> ("both", "max-autotune"); the compile mode is
    None where the modes leave it as it was (``eager``). SettingError for what the app cannot
    show side by side."""
    compiled = [mode for mode in modes if mode != "eager"]
    if list(modes) == ["eager"]:
        return "eager", None
    if len(compiled) == 1:
        return ("both" if "eager" in modes else "compiled"), compiled[0]
    if len(modes) == 2 and "dynamic" in compiled:
        return "static+dynamic", next(mode for mode in compiled if mode != "dynamic")
    raise SettingError(
        "the app measures one or two modes: eager, a compiled mode, eager and a compiled mode "
        f"(eager,compiled), or a compiled mode and dynamic (compiled,dynamic); not {','.join(modes)}"
    )


AUTOMATIC_NAME = re.compile(r"(chain|cli)(_\d+)?")
"""Placeholder names: a new chain's until its text names it (and older files' ``chain_2``, ``cli``)."""
NAME_WORDS = 4
"""At most this many of a chain's operations in a name made from them (the last one kept)."""
UNNAMED = "chain"


def name_from_text(text: str) -> str | None:
    """A name from the operations a chain spells, in order: ``(a + b).relu()`` -> ``add_relu``;
    None while the text is not a valid chain or spells none."""
    from probes.chain.expr import ChainError, op_words  # off the app's first frame

    try:
        words = op_words(text)
    except ChainError:
        return None
    words = [w for i, w in enumerate(words) if i == 0 or w != words[i - 1]]  # mul_mul_mul -> mul
    if len(words) > NAME_WORDS:
        words = [*words[: NAME_WORDS - 1], words[-1]]
    return "_".join(words)[:40] or None


@dataclass
class Chain:
    name: str
    text: str
    named: bool = True
    """The name is the chain's for good, changed only by the user (f2): given, or made once from
    its text's operations. False while a new chain still has its placeholder name: typing names
    nothing (a name that followed the text would change under the user mid-edit); leaving the
    editor names it once (``name_once``)."""


@dataclass
class SourceEntry:
    """A function of the user's own file that the workspace remembers (``kernel-tui model.py:block``).
    Remembered only: opening the workspace never runs it without the user's confirmation."""

    path: str
    """As the worker reads it: absolute where the file is on this machine."""
    name: str
    inputs: list[str] = field(default_factory=list)

    @classmethod
    def from_data(cls, data: Any) -> SourceEntry | None:
        """The entry in ``data``, or None when it is not one (a hand-edited file)."""
        if not isinstance(data, dict):
            return None
        path, name, inputs = data.get("path"), data.get("name"), data.get("inputs", [])
        if not isinstance(path, str) or not isinstance(name, str) or not path or not name.isidentifier():
            return None
        if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
            return None
        return cls(path, name, list(inputs))


def toggle_modes(toggle: str, compile_mode: str) -> tuple[str, ...]:
    """The modes the mode toggle measures with ``compile_mode`` selected (see MODE_CHOICES)."""
    static = compile_mode if compile_mode != "dynamic" else "compiled"
    return {
        "eager": ("eager",),
        "compiled": (compile_mode,),
        "static+dynamic": (static, "dynamic"),
    }.get(toggle, ("eager", compile_mode))


def describe_modes(settings: Settings) -> str:
    """``eager+compiled``, ``max-autotune``, ``compiled vs dynamic``...; `` · fwd+bwd`` with grad."""
    toggle, compiled = modes_toggle(settings.modes)
    shown = {"eager": "eager", "compiled": compiled, "both": f"eager+{compiled}"}.get(toggle, f"{compiled} vs dynamic")
    return str(shown) + (" · fwd+bwd" if settings.grad else "")


SAVED_SETTINGS = ("dtype", "device", "sizes", "focus_size", "reps", "grad", "spread")
"""The settings a workspace file keeps under their own names, besides the mode toggle."""


@dataclass
class Workspace:
    chains: list[Chain] = field(default_factory=list)
    current: int = 0
    settings: Settings = field(default_factory=Settings)
    """What the app measures (the one settings model, ``probes.link.settings``)."""
    compile_mode: str = "compiled"
    """The compile mode the mode toggle measures (kept while eager alone is measured)."""
    chart: str = "time"
    """What the sweep chart plots: one of ``CHART_VIEWS``."""
    pins: dict[str, list[Any]] = field(default_factory=dict)
    """Each chain's pinned result, by chain name (read and written by ``tui.baseline_view``)."""
    source: SourceEntry | None = None
    """The user's file last profiled; offered at the next start, run only once confirmed."""
    devices: list[str] = field(default_factory=list)
    """The ``[HOST:]DEVICE`` entries measured side by side (``--device cpu,b:cpu``); empty for the
    one device of ``settings``, measured by the app's own worker."""
    hosts: dict[str, str] = field(default_factory=dict)
    """The boxes a ``HOST:`` entry names, by name: the command that starts a worker there."""
    version: int = VERSION

    @classmethod
    def default(cls) -> Workspace:
        return cls(chains=[Chain(name, text) for name, text in SEED_CHAINS])

    @property
    def chain(self) -> Chain:
        if not self.chains:
            self.chains.append(Chain(UNNAMED, "", named=False))
        self.current = max(0, min(self.current, len(self.chains) - 1))
        return self.chains[self.current]

    def unique_name(self, base: str, *, besides: Chain | None = None) -> str:
        """``base``, or ``base_2``... where another chain (not ``besides``) has it."""
        names = {c.name for c in self.chains if c is not besides}
        if base not in names:
            return base
        i = 2
        while f"{base}_{i}" in names:
            i += 1
        return f"{base}_{i}"

    def add(self, text: str = "", name: str | None = None, *, after_current: bool = True) -> int:
        """Add a chain after the current one (or last) and make it current; without ``name`` it is
        named once after its text, or keeps a placeholder until its text names it (``name_once``)."""
        chain = Chain(self.unique_name(UNNAMED), text, named=False)
        index = self.current + 1 if after_current and self.chains else len(self.chains)
        self.chains.insert(index, chain)
        self.current = index
        if name is not None:
            self.rename(name)
        else:
            self.name_once()
        return index

    def duplicate(self) -> int:
        source = self.chain
        return self.add(source.text, self.unique_name(f"{source.name}_copy") if source.named else None)

    def delete(self) -> Chain | None:
        """Delete the current chain (the last one is emptied, never removed)."""
        self.pins.pop(self.chain.name, None)
        if len(self.chains) <= 1:
            removed = Chain(self.chain.name, self.chain.text)
            self.chain.text = ""
            return removed
        removed = self.chains.pop(self.current)
        self.current = min(self.current, len(self.chains) - 1)
        return removed

    def rename(self, name: str) -> str:
        """The user's name for the current chain (made unique): kept from now on."""
        self.chain.named = True
        return self._set_name(self.chain, name)

    def name_once(self, chain: Chain | None = None) -> bool:
        """Name ``chain`` (the current one) after its text's operations if it still has its
        placeholder name and its text spells a chain; from then on the name stays. True when it
        was named. Its pin goes with it."""
        chain = chain or self.chain
        if chain.named or not AUTOMATIC_NAME.fullmatch(chain.name):
            return False
        name = name_from_text(chain.text)
        if name is None:
            return False
        self._set_name(chain, name)
        chain.named = True
        return True

    def _set_name(self, chain: Chain, name: str) -> str:
        name = " ".join(name.split())[:40] or chain.name
        if name != chain.name:
            name = self.unique_name(name, besides=chain)
            if chain.name in self.pins:
                self.pins[name] = self.pins.pop(chain.name)
        chain.name = name
        return name

    def select_text(self, text: str) -> int:
        """Select the chain with ``text`` (whitespace-insensitive), adding it when none has it."""
        wanted = normalize(text)
        for i, chain in enumerate(self.chains):
            if normalize(chain.text) == wanted:
                self.current = i
                return i
        return self.add(text, after_current=False)

    # -- JSON --------------------------------------------------------------------------------

    def to_json(self) -> str:
        return json.dumps(self.to_data(), indent=1)

    def to_data(self) -> dict[str, Any]:
        """The workspace as its file holds it: the settings by name, their modes as the app's
        toggle and compile mode (the file's shape since its first version)."""
        s = self.settings
        return {
            "chains": [dataclasses.asdict(chain) for chain in self.chains],
            "current": self.current,
            "settings": {
                "modes": self.toggle,
                "compile_mode": self.compile_mode,
                "dtype": s.dtype,
                "device": s.device,
                "sizes": list(s.sizes),
                "focus_size": s.focus_size,
                "reps": s.reps,
                "chart": self.chart,
                "grad": s.grad,
                "spread": s.spread,
                "devices": self.devices,
                "hosts": self.hosts,
            },
            "pins": self.pins,
            "source": dataclasses.asdict(self.source) if self.source is not None else None,
            "version": self.version,
        }

    # -- settings --------------------------------------------------------------------------

    @property
    def toggle(self) -> str:
        """Where the mode toggle stands (one of MODE_CHOICES) for the modes measured."""
        return modes_toggle(self.settings.modes)[0]

    def toggled(self, toggle: str) -> Settings:
        """The settings with the mode toggle at ``toggle``."""
        return dataclasses.replace(self.settings, modes=toggle_modes(toggle, self.compile_mode))

    def entries(self) -> list[DeviceEntry]:
        """The devices measured: each ``devices`` entry, or the one device of the settings."""
        return check_fleet(self.devices, self.hosts)[0] if self.devices else [DeviceEntry(None, self.settings.device)]

    def take_fleet(self, entries: list[DeviceEntry], hosts: Mapping[str, str]) -> None:
        """Measure ``entries`` (``--device``, checked) on ``hosts`` (``--host``): the first entry's
        device is the settings' device; a list, or a host, is kept as ``devices``."""
        self.hosts = dict(hosts)
        several = len(entries) > 1 or entries[0].host is not None
        self.devices = [str(entry) for entry in entries] if several else []
        self.settings = dataclasses.replace(self.settings, device=entries[0].device)

    def take(self, given: Mapping[str, Any]) -> None:
        """Take the settings ``given`` (checked values by name: the command line's flags); modes
        the app cannot show side by side are SettingError (``modes_toggle``)."""
        if "modes" in given:
            compiled = modes_toggle(given["modes"])[1]
            self.compile_mode = compiled or self.compile_mode
        self.settings = self.settings.given(given)
        if "modes" in given:
            self.settings = self.toggled(self.toggle)  # in the toggle's order: compiled,dynamic

    @classmethod
    def from_data(cls, data: Any) -> tuple[Workspace, list[str]]:
        """The workspace in ``data`` and what of it could not be taken as it is (a file written by a
        newer version, unknown fields, values repaired, entries dropped): saving over such a file
        would lose those, so the caller opens it read-only or copies it aside first."""
        if not isinstance(data, dict):
            raise ValueError("not a workspace object")
        problems = []
        version = data.get("version", VERSION)
        if not isinstance(version, int) or version > VERSION:
            problems.append(f"written by a newer kernel-tui (version {version!r}, this one reads {VERSION})")
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(str(k) for k in data if k not in fields)
        chains = []
        for item in data.get("chains") or []:
            if isinstance(item, dict) and isinstance(item.get("text", ""), str):
                name = str(item.get("name") or UNNAMED)[:40]
                named = item.get("named", not AUTOMATIC_NAME.fullmatch(name))  # files from before: "chain_2", "cli"
                chains.append(Chain(name, item.get("text", ""), named if isinstance(named, bool) else True))
                unknown += sorted(f"chains[].{k}" for k in item if k not in ("name", "text", "named"))
            else:
                problems.append("a chain that is not a name and a text")
        given = data.get("settings")
        raw: dict[str, Any] = given if isinstance(given, dict) else {}
        known = (*SAVED_SETTINGS, "modes", "compile_mode", "chart", "devices", "hosts")
        unknown += sorted(f"settings.{k}" for k in raw if k not in known)
        settings, compile_mode, chart, fixed = _read_settings(raw)
        if fixed:
            problems.append(f"repaired settings: {', '.join(fixed)}")
        if unknown:
            problems.append(f"unknown fields: {', '.join(dict.fromkeys(unknown))}")
        current = data.get("current", 0)
        workspace = cls(chains, current if isinstance(current, int) else 0, settings, compile_mode, chart)
        try:
            entries, hosts = check_fleet(raw.get("devices", []), raw.get("hosts", {}))
            workspace.hosts = hosts
            if raw.get("devices"):
                workspace.take_fleet(entries, hosts)
        except SettingError as exc:
            problems.append(f"repaired settings: {exc}")
        if not workspace.chains:
            workspace.chains = [Chain(name, text) for name, text in SEED_CHAINS]
        _ = workspace.chain  # clamps current
        pins = data.get("pins")
        if isinstance(pins, dict):
            names = {c.name for c in workspace.chains}
            workspace.pins = {k: v for k, v in pins.items() if k in names and isinstance(v, list)}
            if len(workspace.pins) != len(pins):
                problems.append("pins of chains that are not in the file")
        elif pins is not None:
            problems.append("pins that are not a table of chains")
        if data.get("source") is not None:
            workspace.source = SourceEntry.from_data(data["source"])
            if workspace.source is None:
                problems.append("a source file entry that is not a path, a name and inputs")
        changed = _changed_paths(data, workspace.to_data())
        if changed:
            shown = ", ".join(changed[:CHANGED_SHOWN]) + (", ..." if len(changed) > CHANGED_SHOWN else "")
            problems.append(f"values it had to change: {shown}")
        for chain in workspace.chains:
            if AUTOMATIC_NAME.fullmatch(chain.name):
                workspace.name_once(chain)  # a chain left unnamed, or an older file's "chain_2" or "cli"
        return workspace, problems


def _read_settings(raw: Mapping[str, Any]) -> tuple[Settings, str, str, list[str]]:
    """The settings, compile mode and chart in a file's ``settings``, and what of them was
    repaired (out of its limits: the default instead, each checked by the settings model)."""
    toggle, compile_mode, chart = raw.get("modes", "both"), raw.get("compile_mode", "compiled"), raw.get("chart")
    fixed = []
    if toggle not in MODE_CHOICES:
        fixed.append(f"modes {toggle!r:.40}")
        toggle = "both"
    if compile_mode not in COMPILE_MODES:
        fixed.append(f"compile mode {compile_mode!r:.40}")
        compile_mode = "compiled"
    settings, refused = Settings.repaired({name: raw[name] for name in SAVED_SETTINGS if name in raw})
    fixed += [f"dtype {raw['dtype']!r:.40}" if name == "dtype" else name for name in refused]
    modes = toggle_modes(toggle, compile_mode)
    return dataclasses.replace(settings, modes=modes), compile_mode, chart if chart in CHART_VIEWS else "time", fixed


CHANGED_SHOWN = 4
"""At most this many changed values are named in the reason a file opens read-only."""


def _changed_paths(given: Any, kept: Any, where: str = "") -> list[str]:
    """Where ``kept`` (the workspace as it would be saved) differs from ``given`` (the file's data):
    a value cut, coerced (``12345`` to ``"12345"``, ``"yes"`` to ``true``) or repaired. Strict about
    types, since ``1 == 1.0 == True`` in Python but not in the file. A key the file lacks takes its
    default, which loses nothing; a key only the file has is an unknown field, reported as such."""
    if isinstance(given, dict) and isinstance(kept, dict):
        found = []
        for key, value in given.items():
            if key in kept:
                found += _changed_paths(value, kept[key], f"{where}.{str(key)[:30]}" if where else str(key)[:30])
        return found
    if isinstance(given, list) and isinstance(kept, list) and len(given) == len(kept):
        return [
            path
            for i, (a, b) in enumerate(zip(given, kept, strict=True))
            for path in _changed_paths(a, b, f"{where}[{i}]")
        ]
    same = given == kept or (given != given and kept != kept)  # NaN, written and read back, is still NaN
    return [] if type(given) is type(kept) and same else [where]


def default_path() -> Path:
    return user_state_dir() / WORKSPACE_FILE


def save(workspace: Workspace, path: Path) -> None:
    write_private_file(path, workspace.to_json() + "\n")
