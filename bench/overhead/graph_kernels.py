#!/usr/bin/env python3
"""What a trace says of its graph-replayed kernels (paused_graph.py's check):
kernels, those replayed from a graph ("graph node"), those led back to the node
they were captured as ("capture node"), and those whose annotation stack holds
the NVTX range they were captured in (default "capture").

    graph_kernels.py TRACE.json [RANGE]"""
import gzip, json, sys

path = sys.argv[1]
wanted = sys.argv[2] if len(sys.argv) > 2 else "capture"
events = json.load(gzip.open(path) if path.endswith(".gz") else open(path))["traceEvents"]
kernels = [e for e in events if e.get("cat") == "kernel"]
graph = [e for e in kernels if "graph node" in e.get("args", {})]
led_back = [e for e in graph if "capture node" in e["args"]]
in_range = [e for e in graph if wanted in str(e["args"].get("annotation stack", ""))]
print(f"kernels={len(kernels)} graph_kernels={len(graph)} with_capture_node={len(led_back)} "
      f"in_{wanted}={len(in_range)}")
