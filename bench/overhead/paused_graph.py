# A CUDA graph built while gpucap is paused and replayed once it records
# again, under `gpucap record` (SIGUSR2 toggles): the replayed kernels must
# still lead back to their capture-time nodes and ranges. Phases, each in an
# NVTX range: "eager 1" (recording), pause, "capture" (a graph captured while
# paused), resume, "replay" (5 replays), "eager 2". START_PAUSED=1 (under
# `gpucap record --start-paused`): no first pause, so "eager 1" and the
# capture come before the recorder has ever recorded.
import os, signal, time, torch

torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU()) for _ in range(4)]).cuda()
x = torch.randn(64, 256, device="cuda")


def toggle():
    torch.cuda.synchronize()
    os.kill(os.getpid(), signal.SIGUSR2)
    time.sleep(0.3)  # the control loop acts within ~50 ms; a detach waits for the next CUDA call


with torch.cuda.nvtx.range("eager 1"):
    for _ in range(3):
        y = m(x)
if os.environ.get("START_PAUSED") != "1":
    toggle()
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        y = m(x)
torch.cuda.current_stream().wait_stream(s)
torch.cuda.synchronize()  # an API exit: the pause's detach runs here
time.sleep(0.2)           # and the control loop attaches the resource callbacks again
g = torch.cuda.CUDAGraph()
with torch.cuda.nvtx.range("capture"):
    with torch.cuda.graph(g):
        y = m(x)
toggle()
with torch.cuda.nvtx.range("replay"):
    for _ in range(5):
        g.replay()
with torch.cuda.nvtx.range("eager 2"):
    y = m(x)
torch.cuda.synchronize()
print("RESULT paused_graph done")
