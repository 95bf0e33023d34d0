"""Reads the runs' JSON beside it: per run and mode, the device times' short/long geometric mean,
in how many pairs the short warm-up read higher, and in how many its spread (IQR) was wider."""
import json, math, statistics
from pathlib import Path

HERE = Path(__file__).parent
for name in ("warm_len_ab_6", "warm_len_ab_6b", "warm_len_ab_pause3"):
    rows = json.loads((HERE / f"{name}.json").read_text())
    for mode in ("eager", "compiled"):
        ratios = [x["short"][mode]["dev"] / x["long"][mode]["dev"] for x in rows]
        rel = {arm: [(x[arm][mode]["iqr"][1] - x[arm][mode]["iqr"][0]) / x[arm][mode]["dev"] for x in rows] for arm in ("long", "short")}
        higher = sum(1 for r in ratios if r > 1)
        wider = sum(1 for s, l in zip(rel["short"], rel["long"]) if s > l)
        geo = math.exp(statistics.mean(math.log(r) for r in ratios))
        print(f"{name:20} {mode:8} n={len(ratios)} geo-mean short/long {geo:.3f}; short read higher in {higher}/{len(ratios)}, "
              f"its IQR wider in {wider}/{len(ratios)}; mean IQR/median long {statistics.mean(rel['long']):.3f} short {statistics.mean(rel['short']):.3f}")
