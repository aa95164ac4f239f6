"""nccl_time: NCCL kernel time per rank and step, and the wait in it.

A rank's NCCL time in a step is the summed duration of its kernels whose
name starts with `nccl` (what `gpucap stats` counts as communication). In a
collective every rank's kernel runs until the last rank has joined, so the
rank that joined last spends the least time in NCCL: it is the step's
straggler, and every other rank's wait is its NCCL time minus the
straggler's (the straggler's own wait is 0). A rank with no NCCL time in a
step is not its straggler (it ran no collective there); a step where no rank
has any has no straggler and no wait. These are gpucap's rules
(tools/stats/include/gpucap/tools/stats/rank_steps.h).
"""

from gpucap_recipes import db

PER_WINDOW_SQL = f"""
WITH nccl AS (
  SELECT window, COUNT(*) AS kernels, SUM(dur_ns) AS ns
  FROM kernels WHERE name IN ({db.NCCL_NAME_SQL})
  GROUP BY window)
SELECT w.rank, w.window_index, {db.STEP_SQL} AS step,
       COALESCE(n.kernels, 0) AS nccl_kernels, COALESCE(n.ns, 0) AS nccl_ns
FROM windows w LEFT JOIN nccl n ON n.window = w.id
"""

COLUMNS = ["rank", "window_index", "step", "nccl_kernels", "nccl_ns"]


def per_rank_step(path):
    """One database's NCCL kernels and time per (rank, step); a step a rank
    has twice (two windows of one label) sums them."""
    frame = db.query(path, PER_WINDOW_SQL)
    return frame.groupby(["rank", "step"], as_index=False).agg(
        window_index=("window_index", "min"),
        nccl_kernels=("nccl_kernels", "sum"),
        nccl_ns=("nccl_ns", "sum"),
    )[COLUMNS]


def combine(frames):
    """The per-database frames into one, with each step's wait: NCCL time
    minus the least NCCL time of that step across ranks."""
    frame = db.concat(frames, COLUMNS)
    frame = frame.groupby(["rank", "step"], as_index=False).agg(
        window_index=("window_index", "min"),
        nccl_kernels=("nccl_kernels", "sum"),
        nccl_ns=("nccl_ns", "sum"),
    )
    least = frame["nccl_ns"].where(frame["nccl_ns"] > 0).groupby(frame["step"]).transform("min")
    frame["wait_ns"] = (frame["nccl_ns"] - least).clip(lower=0).fillna(0).astype("int64")
    order = {s: i for i, s in enumerate(db.order_steps(frame))}
    frame["_order"] = frame["step"].map(order)
    frame = frame.sort_values(["_order", "rank"], kind="mergesort").drop(columns="_order")
    return frame.reset_index(drop=True)


def nccl_time(paths, runner):
    """Tables `nccl_time` (step, rank, nccl_kernels, nccl_ns, wait_ns) and
    `ranks` (rank, steps, nccl_ns, wait_ns summed over steps)."""
    frame = combine(runner.map(per_rank_step, paths))
    ranks = frame.groupby("rank", as_index=False).agg(
        steps=("step", "count"), nccl_ns=("nccl_ns", "sum"), wait_ns=("wait_ns", "sum"))
    return {
        "nccl_time": frame[["step", "rank", "nccl_kernels", "nccl_ns", "wait_ns"]],
        "ranks": ranks,
    }
