"""Manifests of the Kineto-differential fixture pairs (stdlib only).

  pair_manifest.py expect NAME WORK_DIR RECORD_COMMAND MARKS [prewarmed]
      prints NAME.expect.json: what the program says it ran, from both runs'
      manifests (WORK_DIR/NAME.{gpucap,kineto}.manifest.json), with the
      record command, whether the capture holds record-time marks, and
      whether an unrecorded run filled Inductor's cache first.
  pair_manifest.py index DIR
      prints manifest.json: one entry per DIR/*.expect.json.
"""
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"{path}: {e}"}


def expect(name, work, record_command, marks, prewarmed=""):
    runs = {m: load(os.path.join(work, f"{name}.{m}.manifest.json")) for m in ("gpucap", "kineto")}
    g = runs["gpucap"]
    launch = record_command.split(" -- ", 1)[1].rsplit(" gpucap OUT", 1)[0]
    doc = {
        "program": name,
        "source": f"tests/gpu/kineto/{name}.py",
        "capture": f"{name}.gpucap",
        "kineto_trace": f"{name}.kineto.json.gz",
        "record_command": record_command,
        "kineto_command": f"{launch} kineto OUT",
        "record_time_marks": marks != "-",
        "window_nvtx": None if marks == "-" else marks,
        "prewarmed": prewarmed == "prewarmed",
        "step_regex": g.get("step_regex"),
        "warmup_steps": g.get("warmup_steps"),
        "compared_steps": g.get("compared_steps"),
        "expect": g.get("expect"),
        "same_steps_in_both_runs": g.get("compared_steps") == runs["kineto"].get("compared_steps"),
        "runs": runs,
    }
    json.dump(doc, sys.stdout, indent=1)
    print()


def index(folder):
    pairs = []
    for path in sorted(glob.glob(os.path.join(folder, "*.expect.json"))):
        e = load(path)
        if "program" not in e:
            continue
        runs = e.get("runs", {})
        pairs.append({
            "program": e["program"],
            "source": e["source"],
            "capture": e["capture"],
            "kineto_trace": e["kineto_trace"],
            "expect": os.path.basename(path),
            "record_command": e["record_command"],
            "kineto_command": e["kineto_command"],
            "record_time_marks": e["record_time_marks"],
            "prewarmed": e.get("prewarmed", False),
            "step_regex": e["step_regex"],
            "compared_steps": e["compared_steps"],
            "threads_by_role": {m: r.get("threads") for m, r in runs.items()},
            "kineto_experimental_config": (runs.get("kineto", {}).get("kineto") or {}).get("experimental_config"),
        })
    json.dump({"what": "Kineto-differential fixture pairs (issue 38): each program recorded once under "
                       "gpucap record and once under torch.profiler; see fixtures/README.md",
               "pairs": pairs}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    if sys.argv[1:2] == ["expect"] and len(sys.argv) in (6, 7):
        expect(*sys.argv[2:])
    elif sys.argv[1:2] == ["index"] and len(sys.argv) == 3:
        index(sys.argv[2])
    else:
        sys.exit(__doc__)
