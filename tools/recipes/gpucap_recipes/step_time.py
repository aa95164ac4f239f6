"""step_time: how long each step (window) took, across ranks.

A step's duration on a rank is its window's span (end_ns - start_ns: for
`nvtx:` windows the step's CPU range); a label a rank has twice sums its
windows. Medians are of whole nanoseconds: the middle value, or for an even
count the mean of the two middle values rounded down, as `gpucap stats`
takes them.
"""
import pandas as pd

from gpucap_recipes import db

PER_WINDOW_SQL = f"""
SELECT w.rank, w.window_index, {db.STEP_SQL} AS step, w.end_ns - w.start_ns AS step_ns
FROM windows w
"""

COLUMNS = ["rank", "window_index", "step", "step_ns"]


def per_rank_step(path):
    frame = db.query(path, PER_WINDOW_SQL)
    return frame.groupby(["rank", "step"], as_index=False).agg(
        window_index=("window_index", "min"), step_ns=("step_ns", "sum"))[COLUMNS]


def median_ns(values):
    s = sorted(int(v) for v in values)
    if not s:
        return 0
    hi = s[len(s) // 2]
    if len(s) % 2:
        return hi
    lo = s[len(s) // 2 - 1]
    return lo + (hi - lo) // 2


def _spread(group, key):
    ordered = group.sort_values(["step_ns", key], kind="mergesort")
    return {
        "count": len(group),
        "min_ns": int(ordered["step_ns"].iloc[0]),
        "median_ns": median_ns(group["step_ns"]),
        "max_ns": int(ordered["step_ns"].iloc[-1]),
        "total_ns": int(group["step_ns"].sum()),
        "fastest": int(ordered[key].iloc[0]) if key == "rank" else ordered[key].iloc[0],
        "slowest": int(ordered[key].iloc[-1]) if key == "rank" else ordered[key].iloc[-1],
    }


def step_time(paths, runner):
    """Tables `steps` (per step across ranks: ranks, min_ns, median_ns,
    max_ns, fastest_rank, slowest_rank; in step order), `ranks` (per rank
    across steps: steps, min_ns, median_ns, max_ns, total_ns, fastest_step,
    slowest_step) and `step_ns` (every rank's every step)."""
    frame = db.concat(runner.map(per_rank_step, paths), COLUMNS)
    frame = frame.groupby(["rank", "step"], as_index=False).agg(
        window_index=("window_index", "min"), step_ns=("step_ns", "sum"))
    order = {s: i for i, s in enumerate(db.order_steps(frame))}
    frame["_order"] = frame["step"].map(order)
    frame = frame.sort_values(["_order", "rank"], kind="mergesort").reset_index(drop=True)

    steps = pd.DataFrame(
        [{"step": g["step"].iloc[0], **_spread(g, "rank")} for _, g in frame.groupby("_order", sort=True)],
        columns=["step", "count", "min_ns", "median_ns", "max_ns", "total_ns", "fastest", "slowest"])
    steps = steps.rename(columns={"count": "ranks", "fastest": "fastest_rank", "slowest": "slowest_rank"})
    steps = steps[["step", "ranks", "min_ns", "median_ns", "max_ns", "fastest_rank", "slowest_rank"]]

    ranks = pd.DataFrame(
        [{"rank": int(rank), **_spread(g, "step")} for rank, g in frame.groupby("rank", sort=True)],
        columns=["rank", "count", "min_ns", "median_ns", "max_ns", "total_ns", "fastest", "slowest"])
    ranks = ranks.rename(columns={"count": "steps", "fastest": "fastest_step", "slowest": "slowest_step"})
    return {
        "steps": steps.astype({c: "int64" for c in ["ranks", "min_ns", "median_ns", "max_ns", "fastest_rank",
                                                     "slowest_rank"]}),
        "ranks": ranks.astype({c: "int64" for c in ["rank", "steps", "min_ns", "median_ns", "max_ns", "total_ns"]}),
        "step_ns": frame[["step", "rank", "step_ns"]],
    }
