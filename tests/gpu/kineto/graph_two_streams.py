"""A CUDA graph captured over two streams with a device-to-device copy node.

Exercises (issue 38 item 3): torch.cuda.graph captures, on its capture
stream, an MLP forward, and forks a side stream that copies the static input
into a second buffer (`buf.copy_(x)`: same dtype, contiguous, so PyTorch
calls cudaMemcpyAsync device-to-device, which becomes a memcpy node of the
graph) and scales it; the main capture stream joins the side stream and adds
the two. Each compared step `iteration#N` copies a new input into the static
input (an eager D2D copy), replays the graph and reduces its output eagerly.

Kineto has been seen to show such a copy node as a kernel (`memcpy128`)
while gpucap shows `Memcpy DtoD (Device -> Device)`: this pair is the
evidence for deciding which representation is the truth.

Ranges opened during the capture (`graph_capture`, `captured_main`,
`captured_side`) exist only at capture time; at replay, the replayed ops sit
in `iteration#N` > `replay`.

  python3 graph_two_streams.py {gpucap|kineto} OUT_DIR
"""
import torch
import torch.nn as nn

from kineto_common import Program, deterministic, rng

WARMUP, STEPS = 1, 3
BATCH, DIM = 128, 512

prog = Program("graph_two_streams", r"iteration#\d+")
deterministic()
dev = torch.device("cuda")

model = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, DIM)).to(dev).eval()
inputs = torch.randn(WARMUP + STEPS, BATCH, DIM, device=dev)
x = torch.zeros(BATCH, DIM, device=dev)      # the graph's static input
buf = torch.empty(BATCH, DIM, device=dev)    # the copy node's destination
side = torch.cuda.Stream()
warm = torch.cuda.Stream()
prog.note_stream("default", torch.cuda.current_stream())
prog.note_stream("graph_side", side)


def body():
    with rng("captured_main"):
        y = model(x)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), rng("captured_side"):
        buf.copy_(x)                # the device-to-device copy node
        z = buf * 0.5
    torch.cuda.current_stream().wait_stream(side)
    return y + z


with torch.no_grad():
    # Warm up on a side stream before capture, as torch.cuda.graph asks.
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(3):
            body()
    torch.cuda.current_stream().wait_stream(warm)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with rng("graph_capture"):
        with torch.cuda.graph(g):
            out = body()

    def step(i, name, warmup=False):
        with prog.step(name, warmup):
            with rng("load_input"):
                x.copy_(inputs[i])  # eager D2D copy into the static input
            with rng("replay"):
                g.replay()
            with rng("reduce"):
                return out.sum()

    for i in range(WARMUP):
        step(i, f"warmup#{i}", warmup=True)
    sums = []
    with prog.compared():
        for i in range(STEPS):
            sums.append(step(WARMUP + i, f"iteration#{i}"))
    torch.cuda.synchronize()

prog.manifest["expect"] = {
    "ranges_per_step": ["load_input", "replay", "reduce"],
    "capture_ranges": ["graph_capture", "captured_main", "captured_side"],
    "graph": {
        "replays_per_step": 1,
        "nodes": "3 GEMMs (+bias), 2 ReLU, on the capture stream; on the side stream a D2D memcpy node then one scale kernel; one add after the join",
        "memcpy_d2d_node_bytes": BATCH * DIM * 4,
    },
    "eager_per_step": {"memcpy_d2d_bytes": BATCH * DIM * 4, "reduce_kernels": "torch.sum of the output"},
}
prog.write()
