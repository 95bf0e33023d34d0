"""Each changed snapshot SVG against HEAD's, read back as a grid of terminal cells (character, text
style, background): identical or not. (Pixels are no judge: cairosvg ignores textLength.)"""
import html, re, subprocess
CHAR_W = 12.2
def grid(svg: str):
    styles = dict(re.findall(r"\.(terminal-r\d+) \{([^}]*)\}", svg))
    cells = {}
    body = svg[svg.index("terminal-matrix") if "terminal-matrix" in svg else 0:]
    for fill, x, y, w in re.findall(r'<rect fill="([^"]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"', svg):
        row = round(float(y) / 24.4); c0 = round(float(x) / CHAR_W)
        for c in range(c0, c0 + round(float(w) / CHAR_W)):
            cells.setdefault((row, c), ["", "", ""])[2] = fill
    for cls, x, y, text in re.findall(r'<text class="(terminal-r\d+)" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', body):
        row = round((float(y) - 20) / 24.4); c0 = round(float(x) / CHAR_W)
        for i, ch in enumerate(html.unescape(text)):
            cell = cells.setdefault((row, c0 + i), ["", "", ""])
            cell[0] = ch; cell[1] = styles[cls].strip()
    # a space draws nothing but its background, whatever its text style
    return {k: (v[0], v[1], v[2]) if v[0].strip("\xa0 ") else ("", "", v[2]) for k, v in cells.items()}
files = subprocess.run(["git", "diff", "--name-only", "--", "tests/tui/__snapshots__", "screenshots"], capture_output=True, text=True).stdout.split()
for f in files:
    old = grid(subprocess.run(["git", "show", f"HEAD:{f}"], capture_output=True, text=True).stdout)
    new = grid(open(f).read())
    diffs = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    print("same" if not diffs else f"DIFF {len(diffs)} cells, first {diffs[:3]} {[(old.get(k), new.get(k)) for k in diffs[:2]]}", f.split("/")[-1])
