"""kernel_hist: the distribution of each kernel's durations, across ranks.

Bins are log-spaced and fixed (`bins_per_decade` per power of ten, their
edges whole nanoseconds: bin k holds durations from ceil(10^(k/b)) ns up to
the next bin's start, and a bin [0, 1) holds zero-length kernels), so every
database bins its kernels alone and the counts add. A kernel that is in the
database once per window of overlapping windows counts once per window, as
in `gpucap stats` over the same windows.
"""
import math

import numpy as np

from gpucap_recipes import db

NAME_COLUMNS = {"demangled": "name", "base": "short_name", "mangled": "mangled_name"}

# The largest edge: 10^13 ns, about 2.8 hours.
TOP_DECADE = 13


def edges(bins_per_decade):
    """Bin starts in ns: 0, 1, then ceil(10^(k/b)) up to 10^13, distinct."""
    starts = [0] + [math.ceil(10 ** (k / bins_per_decade)) for k in range(TOP_DECADE * bins_per_decade + 1)]
    return np.unique(np.array(starts, dtype="int64"))


def per_kernel(path, names, bins_per_decade):
    column = NAME_COLUMNS[names]
    frame = db.query(path, f"""
        SELECT k.rank, s.value AS kernel, k.dur_ns
        FROM kernels k JOIN strings s ON s.id = k.{column}""")
    starts = edges(bins_per_decade)
    frame["bin"] = np.searchsorted(starts, frame["dur_ns"].to_numpy(), side="right") - 1
    hist = frame.groupby(["kernel", "bin"], as_index=False).agg(count=("dur_ns", "size"))
    kernels = frame.groupby("kernel", as_index=False).agg(
        count=("dur_ns", "size"), total_ns=("dur_ns", "sum"), min_ns=("dur_ns", "min"),
        max_ns=("dur_ns", "max"))
    ranks = frame[["kernel", "rank"]].drop_duplicates()
    return hist, kernels, ranks


def kernel_hist(paths, runner, names="demangled", bins_per_decade=5):
    """Tables `kernels` (kernel, count, total_ns, mean_ns, min_ns, max_ns,
    ranks: how many ran it; most time first) and `histogram` (kernel,
    bin_start_ns, bin_end_ns, count: the bins that hold any, in the order of
    `kernels`)."""
    if names not in NAME_COLUMNS:
        raise ValueError(f"names: {names!r}; one of {', '.join(NAME_COLUMNS)}")
    if not 1 <= bins_per_decade <= 100:
        raise ValueError("bins_per_decade: 1 to 100")
    parts = runner.map(per_kernel, paths, names=names, bins_per_decade=bins_per_decade)
    hist = db.concat([p[0] for p in parts], ["kernel", "bin", "count"])
    hist = hist.groupby(["kernel", "bin"], as_index=False)["count"].sum()
    kernels = db.concat([p[1] for p in parts], ["kernel", "count", "total_ns", "min_ns", "max_ns"])
    kernels = kernels.groupby("kernel", as_index=False).agg(
        count=("count", "sum"), total_ns=("total_ns", "sum"), min_ns=("min_ns", "min"),
        max_ns=("max_ns", "max"))
    ranks = db.concat([p[2] for p in parts], ["kernel", "rank"]).drop_duplicates()
    kernels = kernels.join(ranks.groupby("kernel").size().rename("ranks"), on="kernel")
    kernels["mean_ns"] = kernels["total_ns"] // kernels["count"]
    kernels = kernels.sort_values(["total_ns", "kernel"], ascending=[False, True], kind="mergesort")
    kernels = kernels[["kernel", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "ranks"]].reset_index(drop=True)

    starts = edges(bins_per_decade)
    ends = np.append(starts[1:], np.iinfo("int64").max)
    hist["bin_start_ns"] = starts[hist["bin"].to_numpy()]
    hist["bin_end_ns"] = ends[hist["bin"].to_numpy()]
    order = {k: i for i, k in enumerate(kernels["kernel"])}
    hist["_order"] = hist["kernel"].map(order)
    hist = hist.sort_values(["_order", "bin"], kind="mergesort")
    hist = hist[["kernel", "bin_start_ns", "bin_end_ns", "count"]].reset_index(drop=True)
    return {"kernels": kernels, "histogram": hist}
