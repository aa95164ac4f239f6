"""Recipes over gpucap's SQLite exports (docs/sqlite.md), one Dask task per
database.

A recipe is a function of the databases' paths (one per rank's capture, or
one of several captures: the `rank` column tells ranks apart) and a
`Runner` (where the per-database tasks run), returning a dict of pandas
DataFrames by table name; it lives in the module of its name:

    from gpucap_recipes import Runner
    from gpucap_recipes.nccl_time import nccl_time
    with Runner("synchronous") as runner:
        tables = nccl_time(["rank0.sqlite", "rank1.sqlite"], runner)

`python3 -m gpucap_recipes RECIPE DB...` runs one from the command line.
"""
from gpucap_recipes import gpu_gaps as _gpu_gaps
from gpucap_recipes import kernel_hist as _kernel_hist
from gpucap_recipes import nccl_time as _nccl_time
from gpucap_recipes import step_time as _step_time
from gpucap_recipes import stragglers as _stragglers
from gpucap_recipes.db import RecipeError, Runner

# By name, for the command line; the modules keep their names (a function
# bound here under its module's name would hide the module).
RECIPES = {
    "nccl_time": _nccl_time.nccl_time,
    "stragglers": _stragglers.stragglers,
    "gpu_gaps": _gpu_gaps.gpu_gaps,
    "kernel_hist": _kernel_hist.kernel_hist,
    "step_time": _step_time.step_time,
}

__all__ = ["RecipeError", "Runner", "RECIPES"]
