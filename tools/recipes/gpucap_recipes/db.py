"""Reading gpucap exports, and running one task per database on Dask.

A task opens its database read-only with the standard library's sqlite3,
queries it with SQL into pandas, and reduces it per rank, so what travels
back to the caller is a few rows per rank and step, never the op tables.

Steps: a row's step is its window's label (`ProfilerStep#3` in
`nvtx:ProfilerStep#\\d+` windows), or `window N` (its index in its capture)
for a window without one (time windows); ranks are lined up by step.
"""
import os
import sqlite3
from urllib.parse import quote

import pandas as pd

# Schema majors these recipes read (docs/sqlite.md: the major changes when
# a column changes meaning or goes away).
SCHEMA_MAJOR = "1"

# The step of a `windows w` row, as lined up across ranks.
STEP_SQL = "CASE WHEN w.label != '' THEN w.label ELSE 'window ' || w.window_index END"

# Kernels gpucap stats counts as communication (IsCommunicationKernel):
# names starting with `nccl`, case-sensitively (GLOB, where LIKE is not).
NCCL_NAME_SQL = "SELECT id FROM strings WHERE value GLOB 'nccl*'"


class RecipeError(Exception):
    """A database that cannot be read as a gpucap export; the message names it."""


def connect(path):
    """Opens `path` read-only (never creating it) and checks it is a gpucap
    export of a schema these recipes read."""
    uri = "file:" + quote(os.path.abspath(path)) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        row = conn.execute("SELECT value FROM meta WHERE process IS NULL AND key = 'schema_version'").fetchone()
    except sqlite3.Error as e:
        raise RecipeError(f"{path}: not a readable gpucap export: {e}") from None
    if row is None:
        conn.close()
        raise RecipeError(f"{path}: not a gpucap export: meta has no schema_version")
    if str(row[0]).split(".")[0] != SCHEMA_MAJOR:
        conn.close()
        raise RecipeError(f"{path}: schema_version {row[0]}; these recipes read {SCHEMA_MAJOR}.x")
    return conn


def query(path, sql, params=()):
    """Runs `sql` on the database at `path` into a DataFrame."""
    conn = connect(path)
    try:
        return pd.read_sql_query(sql, conn, params=params)
    except (sqlite3.Error, pd.errors.DatabaseError) as e:
        raise RecipeError(f"{path}: query failed: {e}") from None
    finally:
        conn.close()


def order_steps(frame, step="step", index="window_index"):
    """The step labels of `frame` in order: by their least window index in
    any rank, then by label."""
    first = frame.groupby(step)[index].min().reset_index()
    return list(first.sort_values([index, step], kind="mergesort")[step])


class Runner:
    """Where the per-database tasks run.

    scheduler: None for a local cluster of `workers` processes (default: one
    per core), made on first use and closed with the runner; "synchronous"
    for this process (tests, debugging); or a scheduler's address
    ("tcp://host:8786") for an existing cluster, whose workers must be able
    to import gpucap_recipes and read the databases' paths.
    """

    def __init__(self, scheduler=None, workers=None):
        self.scheduler = scheduler
        self.workers = workers
        self._client = None
        self._cluster = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def _connect(self):
        if self._client is None:
            from distributed import Client, LocalCluster

            if self.scheduler is None:
                self._cluster = LocalCluster(
                    n_workers=self.workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                )
                self._client = Client(self._cluster)
            else:
                self._client = Client(self.scheduler)
        return self._client

    def map(self, fn, paths, **kwargs):
        """fn(path, **kwargs) for each path, one task each; the results in
        the order of `paths`."""
        paths = [os.path.abspath(p) for p in paths]
        if self.scheduler == "synchronous":
            import dask

            tasks = [dask.delayed(fn, pure=False)(p, **kwargs) for p in paths]
            return list(dask.compute(*tasks, scheduler="synchronous"))
        client = self._connect()
        futures = client.map(fn, paths, pure=False, **kwargs)
        return client.gather(futures)


def concat(frames, columns):
    """pd.concat that gives an empty frame of `columns` for no frames."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype="int64") for c in columns})
    return pd.concat(frames, ignore_index=True)
