#!/usr/bin/env python3
"""Checks capture_lanes.sh's traces (issue 17 items 3 and 4) on the GPU
machine; tests/fixtures/capture_lanes_fixture_test.cc checks the kept
fixture the same way in CI.

lanes.json (capture stream tracking on, --graph-lanes capture): every
graphed kernel, memset and memcpy sits on "stream <id> (graph)" where <id>
is CUPTI's id of the stream it was captured on (the stream of the eager tag
kernel the manifest names), with "capture stream" = <id> and "stream" =
CUPTI's replay stream; k_explicit (no capture stream) stays on CUPTI's
stream. cupti.json: no lane tracks, the capture stream still in the args.
off.json (tracking off): neither."""
import json
import sys
from collections import Counter


def load(path):
    with open(path) as f:
        t = json.load(f)
    ev = t["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
    return t, ev, names


def short(name):
    return name.split("(")[0].split("<")[0]


def main(out):
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    manifest = json.load(open(f"{out}/capture_lanes.expect.json"))
    lanes = manifest["lanes"]
    t, ev, names = load(f"{out}/lanes.json")
    gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")]
    tag_stream = {}
    for e in gpu:
        if short(e["name"]).startswith("tag_"):
            tag_stream[short(e["name"])] = e["args"]["stream"]
    check(len(tag_stream) == 4, f"four tag kernels: {tag_stream}")
    print("driver stream ids (cuStreamGetId):", manifest.get("driver_stream_ids"), "CUPTI's:", tag_stream)
    graphed = [e for e in gpu if "graph node" in e["args"]]
    seen = Counter()
    for e in graphed:
        n = short(e["name"]) if e["cat"] == "kernel" else e["cat"]
        want_tag = lanes.get(n) if e["cat"] == "kernel" else manifest["memset_lane" if e["cat"] == "gpu_memset" else "memcpy_lane"]
        thread = names.get((e["pid"], e["tid"]), "?")
        seen[n] += 1
        if want_tag is None:
            check(thread == f"stream {e['args']['stream']}" and "capture stream" not in e["args"],
                  f"{n}: on CUPTI's stream ({thread}), no capture stream")
            continue
        want = tag_stream.get(want_tag)
        check(e["args"].get("capture stream") == want, f"{n}: capture stream {e['args'].get('capture stream')} == {want_tag}'s {want}")
        check(thread == f"stream {want} (graph)", f"{n}: on '{thread}', want 'stream {want} (graph)'")
        check(e["args"]["stream"] != want, f"{n}: CUPTI's replay stream {e['args']['stream']} kept in args")
    for n in list(lanes) + ["gpu_memset", "gpu_memcpy"]:
        check(seen[n] == manifest["counts"]["replays"], f"{n}: {seen[n]} replays")
    counts = t.get("gpucap", {}).get("counts", {})
    check(counts.get("graph ops on capture-stream lanes", 0) > 0, f"header counts: {counts.get('graph ops with capture stream')} with, {counts.get('graph ops on capture-stream lanes')} on lanes")

    rc = json.load(open(f"{out}/info.json"))["drops"]["recorder_counters"]
    cs = {k: v for k, v in rc.items() if k.startswith("capture_streams_")}
    print("recorder counters:", cs)
    check(cs.get("capture_streams_captures_begun") == 2 and cs.get("capture_streams_captures_ended") == 2,
          "two captures begun and ended (g1 on s0, g2 on the per-thread stream)")
    check(cs.get("capture_streams_open_at_stop") == 0, "no capture open at stop")
    check(cs.get("capture_streams_switches") == 4, "stream-op ids switched on and off once per capture")
    check(cs.get("capture_streams_unresolved") == 0, "every stream resolved at ENTER")

    _, ev_c, names_c = load(f"{out}/cupti.json")
    check(not any(v.endswith("(graph)") for v in names_c.values()), "cupti.json: no lane tracks")
    check(any("capture stream" in e.get("args", {}) for e in ev_c if e.get("ph") == "X"), "cupti.json: capture stream in args")
    _, ev_o, names_o = load(f"{out}/off.json")
    check(not any(v.endswith("(graph)") for v in names_o.values()), "off.json: no lane tracks")
    check(not any("capture stream" in e.get("args", {}) for e in ev_o if e.get("ph") == "X"), "off.json: no capture stream")

    # Item 4: stream priorities from the recorder's StreamInfo, queued with
    # --latency-timestamps (lanes.json), 0 without (off.json).
    prio = manifest["priorities"]
    for e in gpu:
        n = short(e["name"])
        if n in prio:
            got = e["args"].get("stream priority")
            check(got == prio[n], f"{n}: stream priority {got} == {prio[n]}")
    kernels = [e for e in gpu if e["cat"] == "kernel"]
    check(all(e["args"].get("queued", 0) > 0 for e in kernels), f"lanes.json: queued on all {len(kernels)} kernels")
    ko = [e for e in ev_o if e.get("ph") == "X" and e.get("cat") == "kernel"]
    check(all(e["args"].get("queued", 0) == 0 for e in ko), "off.json: queued 0 without latency timestamps")
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
