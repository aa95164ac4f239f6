"""gpu_gaps: idle time between consecutive ops on each GPU stream.

Ops are kernels, copies and memsets. A gap is the time from the latest end
of the ops before an op (by start) to the op's start, when positive; gaps
longer than `min_gap_ns` are counted. busy_ns is the span from the first
op's start to the last op's end less every gap: the time the stream had an
op running, as `gpucap stats` reports it per stream. An op that is in the
database twice (two overlapping windows) counts once.
"""
from gpucap_recipes import db

PER_STREAM_SQL = """
WITH ops AS (
  SELECT process, rank, device, stream, start_ns, end_ns FROM kernels
  UNION SELECT process, rank, device, stream, start_ns, end_ns FROM memcpys
  UNION SELECT process, rank, device, stream, start_ns, end_ns FROM memsets),
busy AS (
  SELECT *, MAX(end_ns) OVER (PARTITION BY process, device, stream ORDER BY start_ns, end_ns
                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS busy_until
  FROM ops)
SELECT rank, device, stream, COUNT(*) AS ops,
       MAX(end_ns) - MIN(start_ns) AS span_ns,
       COALESCE(SUM(CASE WHEN start_ns > busy_until THEN start_ns - busy_until END), 0) AS idle_ns,
       COALESCE(SUM(start_ns - busy_until > :min_gap), 0) AS gaps,
       COALESCE(SUM(CASE WHEN start_ns - busy_until > :min_gap THEN start_ns - busy_until END), 0) AS gap_total_ns,
       COALESCE(MAX(CASE WHEN start_ns - busy_until > :min_gap THEN start_ns - busy_until END), 0) AS gap_max_ns
FROM busy
GROUP BY process, device, stream
"""

COLUMNS = ["rank", "device", "stream", "ops", "span_ns", "busy_ns", "gaps", "gap_total_ns", "gap_max_ns"]


def per_stream(path, min_gap_ns):
    frame = db.query(path, PER_STREAM_SQL, {"min_gap": int(min_gap_ns)})
    frame["busy_ns"] = frame["span_ns"] - frame["idle_ns"]
    return frame[COLUMNS]


def gpu_gaps(paths, runner, min_gap_ns=1_000_000):
    """Table `streams`: per rank, device and stream, the ops, their span,
    the busy time, and the gaps longer than `min_gap_ns` (count, total,
    largest), by rank, device and stream."""
    if min_gap_ns < 0:
        raise ValueError("min_gap_ns must be 0 or more")
    frame = db.concat(runner.map(per_stream, paths, min_gap_ns=min_gap_ns), COLUMNS)
    frame = frame.sort_values(["rank", "device", "stream"], kind="mergesort").reset_index(drop=True)
    return {"streams": frame[COLUMNS]}
