#!/usr/bin/env python3
"""Are sampled steps complete? Holds each step a --sample capture recorded
against the steps of a capture recorded whole (same program), from
`gpucap build --window marks` traces.

    sampled_steps.py GPUCAP SAMPLED.gpucap FULL.gpucap WORKDIR [FULL_SELECT]

Per sampled window: its kernel multiset (demangled names), whether it equals
the most common multiset of the full capture's windows FULL_SELECT (default
100-119, past the warm-up), kernels without a launch flow, kernels whose
annotation is not the window's step. Over the whole sampled capture: kernels
outside every sampled step (ops of neighbouring steps that got in)."""
import collections, glob, gzip, json, os, re, subprocess, sys


def load(p):
    return json.load(gzip.open(p) if p.endswith(".gz") else open(p))


def build(g, cap, out, *extra):
    r = subprocess.run([g, "build", cap, "-o", out, "-q", *extra], capture_output=True, text=True)
    if r.returncode != 0:
        print("build failed", cap, extra, r.returncode, r.stderr[-400:])
    return r.returncode


def windows(g, cap, work, *extra):
    d = os.path.join(work, os.path.basename(cap) + ".win") + "/"
    os.makedirs(d, exist_ok=True)
    build(g, cap, d, "--window", "marks", *extra)
    out = []
    for f in glob.glob(d + "*.json*"):
        t = load(f)
        ev = t["traceEvents"]
        label = t.get("gpucap", {}).get("window", {}).get("label", "")
        k = [e for e in ev if e.get("cat") == "kernel"]
        flows_in = {e.get("id") for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "f"}
        out.append({"file": os.path.basename(f), "label": label,
                    "multiset": collections.Counter(e["name"] for e in k),
                    "kernels": len(k),
                    "not_annotated_by_step": sum((e.get("args", {}).get("annotation stack") or
                                                  [e.get("args", {}).get("annotation", "")])[0] != label for e in k),
                    "flows_in": len(flows_in),
                    "recording": t.get("gpucap", {}).get("recording", [])})
    return sorted(out, key=lambda w: int(re.sub(r"\D", "", w["label"]) or 0))


def main():
    g, sampled, full, work = sys.argv[1:5]
    sel = sys.argv[5] if len(sys.argv) > 5 else "100-119"
    os.makedirs(work, exist_ok=True)
    fw = windows(g, full, work, "--select", sel)
    common = collections.Counter(tuple(sorted(w["multiset"].items())) for w in fw)
    ref, ref_n = common.most_common(1)[0] if common else ((), 0)
    sw = windows(g, sampled, work)
    whole = os.path.join(work, os.path.basename(sampled) + ".whole.json")
    build(g, sampled, whole)
    t = load(whole)
    labels = {w["label"] for w in sw}
    kernels = [e for e in t["traceEvents"] if e.get("cat") == "kernel"]
    outside = sum((e.get("args", {}).get("annotation stack") or [e.get("args", {}).get("annotation", "")])[0]
                  not in labels for e in kernels)
    res = {"sampled_capture": sampled, "full_capture": full,
           "full_windows": len(fw), "full_distinct_multisets": len(common), "full_ref_windows": ref_n,
           "ref_kernels": sum(n for _, n in ref),
           "sampled_windows": len(sw),
           "sampled_equal_to_ref": sum(tuple(sorted(w["multiset"].items())) == ref for w in sw),
           "sampled_labels": [w["label"] for w in sw],
           "sampled_kernels": [w["kernels"] for w in sw],
           "sampled_not_annotated_by_step": sum(w["not_annotated_by_step"] for w in sw),
           "sampled_kernels_without_flow": sum(max(0, w["kernels"] - w["flows_in"]) for w in sw),
           "whole_kernels": len(kernels), "whole_kernels_outside_sampled_steps": outside,
           "recording_object": t.get("gpucap", {}).get("recording", [])[:6]}
    for w in sw:
        if tuple(sorted(w["multiset"].items())) != ref:
            diff = (w["multiset"] - collections.Counter(dict(ref))) + collections.Counter()
            miss = (collections.Counter(dict(ref)) - w["multiset"])
            res.setdefault("mismatches", []).append({"label": w["label"], "extra": dict(diff), "missing": dict(miss)})
    print(json.dumps(res, indent=1))


main()
