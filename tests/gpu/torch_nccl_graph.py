# One rank under torchrun with the NCCL backend: all-reduces of two dtypes
# run eagerly inside ProfilerStep#N ranges, then the same collectives captured
# in a CUDA graph (torch.cuda.graph) and replayed inside later steps. NCCL
# (2.19 and later) annotates each collective with an NVTX range carrying an
# extended payload (communicator, message size, reduction op). Writes a
# manifest of what it did, with the NCCL version.
#
# The reduction is AVG: on one rank NCCL runs an in-place SUM as nothing at
# all (no kernel, and a captured graph comes out empty), while AVG still
# launches its one-rank reduce kernel, eagerly and inside the graph.
#   torchrun --standalone --nproc_per_node=1 torch_nccl_graph.py OUT_DIR
import json, os, sys, torch, torch.distributed as dist

for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
    assert os.environ.get(k) in ("0", "1"), f"{k} must be set (NVLink multicast stays off)"
out = sys.argv[1] if len(sys.argv) > 1 else "."
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(rank)
dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
tensors = {"float32": torch.ones(1 << 20, device="cuda"),
           "bfloat16": torch.ones(1 << 18, device="cuda", dtype=torch.bfloat16)}
eager_steps, graph_steps = 3, 3
for step in range(eager_steps):
    with torch.cuda.nvtx.range(f"ProfilerStep#{step}"):
        for t in tensors.values():
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
torch.cuda.synchronize()

# Capture: warm up on a side stream first, as torch.cuda.graph wants.
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for t in tensors.values():
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
torch.cuda.current_stream().wait_stream(s)
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.nvtx.range("graph_capture"):
    with torch.cuda.graph(g):
        for t in tensors.values():
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
for i in range(graph_steps):
    with torch.cuda.nvtx.range(f"ProfilerStep#{eager_steps + i}"):
        g.replay()
torch.cuda.synchronize()
assert tensors["float32"][0].item() == 1.0  # one rank: an average of one
dist.barrier()
dist.destroy_process_group()
nccl = torch.cuda.nccl.version()
json.dump({"rank": rank, "world_size": world, "torch": torch.__version__,
           "nccl_version": ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl),
           "eager_steps": eager_steps, "graph_steps": graph_steps,
           "collectives": [{"op": "all_reduce", "reduction": "avg", "dtype": d, "nelems": t.numel(),
                            "bytes": t.numel() * t.element_size()} for d, t in tensors.items()],
           "eager_all_reduces": eager_steps * len(tensors),
           "warmup_all_reduces": len(tensors),
           "captured_all_reduces": len(tensors),
           "replays": graph_steps,
           "steps": list(range(eager_steps + graph_steps))},
          open(os.path.join(out, "nccl_graph.expect.json"), "w"))
print(f"rank {rank}: done, torch {torch.__version__}, nccl {nccl}")
