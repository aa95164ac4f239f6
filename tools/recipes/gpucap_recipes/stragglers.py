"""stragglers: per step, the rank that joined its collectives last.

The straggler of a step is the rank with the least NCCL time in it
(nccl_time says why); its margin is how much less that is than the next
least (how long every other rank waited for it at the least), and
max_wait_ns what it cost the rank that waited longest. Ties go to the lower
rank, with a margin of 0. A step that only one rank has has no margin. A
rank without NCCL time in a step is not its straggler; a step where no rank
has any is left out.
"""
import pandas as pd

from gpucap_recipes import nccl_time


def per_step(frame):
    """One row per step from nccl_time.combine's frame, in step order."""
    rows = []
    for step, group in frame.groupby("step", sort=False):
        group = group[group["nccl_ns"] > 0].sort_values(["nccl_ns", "rank"], kind="mergesort")
        if group.empty:
            continue
        least = int(group["nccl_ns"].iloc[0])
        rows.append({
            "step": step,
            "ranks": len(group),
            "straggler_rank": int(group["rank"].iloc[0]),
            "straggler_nccl_ns": least,
            "margin_ns": int(group["nccl_ns"].iloc[1]) - least if len(group) > 1 else None,
            "max_wait_ns": int(group["nccl_ns"].iloc[-1]) - least,
        })
    steps = pd.DataFrame(rows, columns=["step", "ranks", "straggler_rank", "straggler_nccl_ns",
                                        "margin_ns", "max_wait_ns"])
    steps["margin_ns"] = steps["margin_ns"].astype("Int64")
    return steps


def stragglers(paths, runner):
    """Tables `steps` (step, ranks, straggler_rank, straggler_nccl_ns,
    margin_ns, max_wait_ns), `ranks` (rank, straggling_steps, margin_ns
    summed over them; most often first) and `summary` (the rank straggling
    most often, and in how many of how many steps)."""
    frame = nccl_time.combine(runner.map(nccl_time.per_rank_step, paths))
    steps = per_step(frame)
    counts = steps.groupby("straggler_rank").agg(
        straggling_steps=("step", "count"), margin_ns=("margin_ns", "sum"))
    ranks = pd.DataFrame({"rank": sorted(frame["rank"].unique())})
    ranks = ranks.join(counts, on="rank")
    ranks["straggling_steps"] = ranks["straggling_steps"].fillna(0).astype("int64")
    ranks["margin_ns"] = ranks["margin_ns"].fillna(0).astype("int64")
    ranks = ranks.sort_values(["straggling_steps", "rank"], ascending=[False, True],
                              kind="mergesort").reset_index(drop=True)
    summary = pd.DataFrame(columns=["most_often_rank", "straggling_steps", "steps"])
    if len(steps):
        summary = pd.DataFrame([{
            "most_often_rank": int(ranks["rank"].iloc[0]),
            "straggling_steps": int(ranks["straggling_steps"].iloc[0]),
            "steps": len(steps),
        }])
    return {"steps": steps, "ranks": ranks, "summary": summary}
