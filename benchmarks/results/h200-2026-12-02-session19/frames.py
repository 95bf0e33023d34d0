"""For each 'recv MeasurementResult <mode> early' in the app: the app's marks until 'seen'."""
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
mode = sys.argv[2] if len(sys.argv) > 2 else "compiled"
app = None
for i, r in enumerate(rows):
    if r[2] == "recv" and r[3].startswith(f"MeasurementResult {mode} early"):
        app = r[1]; t0 = float(r[0]); out = []
        for s in rows[i + 1:]:
            if s[2] == "seen":
                out.append(f"SEEN {1000*(float(s[0])-t0):.1f}"); break
            if s[1] == app and s[2] in ("render_panes>", "render_panes<", "layout>", "layout<", "display", "recv"):
                out.append(f"{s[2]}{(' '+s[3][:22]) if s[2]=='recv' else ''} {1000*(float(s[0])-t0):.1f}")
        print(" | ".join(out))
