# The stall per detach across captures (issue 40: p99 <= 5 ms): reads
# `gpucap info --json` outputs and prints each capture's detaches, give-ups,
# hold and stall p50/p99/max, then over all captures the median of the
# p50s, the largest p99 and the largest of each. The hold runs from the
# gate's closing to its opening, the wait for calls in flight included; the
# stall is how long the first call held waited (what the program felt),
# for the detaches and for the gated switches (attaches, kinds, flushes). (A capture keeps its own quantiles, not
# every hold; the largest per-capture p99 bounds the pooled p99 from above.)
#
#   python3 detach_holds.py INFO.json...
import json, re, statistics, sys

KEYS = ("cupti_detaches", "cupti_detach_give_ups", "cupti_detach_busy", "cupti_detach_hold_ns_p50",
        "cupti_detach_hold_ns_p99", "cupti_detach_hold_ns_max", "cupti_detach_stall_ns_p50",
        "cupti_detach_stall_ns_p99", "cupti_detach_stall_ns_max", "cupti_switches_gated", "cupti_switch_stall_ns_p50",
        "cupti_switch_stall_ns_p99", "cupti_switch_stall_ns_max", "entry_gate_stubs", "entry_gate_held_calls")
rows = []
for path in sys.argv[1:]:
    try:
        text = open(path).read()
    except OSError as e:
        print(f"{path}: {e}")
        continue
    # The counters appear wherever info puts the recorder's stats: take the
    # last value of each (the trailer's).
    row = {}
    for k in KEYS:
        found = re.findall(r'"%s":\s*(\d+)' % k, text)
        if found:
            row[k] = int(found[-1])
    rows.append((path, row))
    print(path, " ".join(f"{k}={row.get(k, '-')}" for k in KEYS))
held = [r for _, r in rows if r.get("cupti_detaches")]
if not held:
    print("detach holds: no capture detached")
    sys.exit(0)
ms = lambda ns: f"{ns / 1e6:.3f} ms"
print(f"detach holds over {len(held)} captures, {sum(r['cupti_detaches'] for r in held)} detaches, "
      f"{sum(r.get('cupti_detach_give_ups', 0) for r in held)} give-ups: "
      f"p50 (median of captures') {ms(statistics.median(r['cupti_detach_hold_ns_p50'] for r in held))}, "
      f"p99 (largest capture's) {ms(max(r['cupti_detach_hold_ns_p99'] for r in held))}, "
      f"max {ms(max(r['cupti_detach_hold_ns_max'] for r in held))}")
for what in ("detach", "switch"):
    k = f"cupti_{what}_stall_ns_p99"
    have = [r for r in held if k in r]
    if have:
        print(f"{what} stalls over {len(have)} captures: "
              f"p50 (median of captures') {ms(statistics.median(r[f'cupti_{what}_stall_ns_p50'] for r in have))}, "
              f"p99 (largest capture's) {ms(max(r[k] for r in have))}, "
              f"max {ms(max(r[f'cupti_{what}_stall_ns_max'] for r in have))}")
