"""Shared harness of the Kineto-differential fixture programs (issue 38).

Every program in this folder runs the same deterministic work in one of two
modes, named by its first argument:

  gpucap  a plain run, meant to be recorded with `gpucap record`;
  kineto  the same run with its compared steps inside
          torch.profiler.profile(activities=[CPU, CUDA]), the trace exported
          with prof.export_chrome_trace to OUT/<name>.kineto.json.

and writes OUT/<name>.<mode>.manifest.json, a manifest of what it ran (steps, threads
by role, streams, what it expects on the GPU). Only the compared steps run
under the profiler, so the Kineto trace needs no cutting: warm-up (compiles,
graph captures, cuBLAS handles, NCCL init) happens before it starts.

Every range is opened with `rng(name)`: an NVTX push/pop AND a
torch.profiler.record_function of the same name, so that both tools see the
same ranges. Steps are never called ProfilerStep, and prof.step() is never
called: the point is steps named by the user.
"""
import contextlib
import json
import os
import sys
import threading

# No Inductor compile-worker processes: they start no CUDA, but one process
# is simpler to record and to reason about.
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

import torch  # noqa: E402

MODES = ("gpucap", "kineto")


@contextlib.contextmanager
def rng(name):
    """One range, seen by both tools: NVTX (gpucap) and record_function (Kineto)."""
    torch.cuda.nvtx.range_push(name)
    try:
        with torch.profiler.record_function(name):
            yield
    finally:
        torch.cuda.nvtx.range_pop()


def deterministic(seed=0):
    """Same work every run: fixed seeds, no cuDNN benchmarking, no TF32 choice left open."""
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


class Program:
    """Mode, output folder and manifest of one fixture program run."""

    def __init__(self, name, step_regex, argv=None):
        argv = sys.argv[1:] if argv is None else argv
        if len(argv) < 2 or argv[0] not in MODES:
            sys.exit(f"usage: {name}.py {{gpucap|kineto}} OUT_DIR")
        self.name, self.mode, self.out = name, argv[0], argv[1]
        os.makedirs(self.out, exist_ok=True)
        self._lock = threading.Lock()
        self.manifest = {
            "program": name,
            "mode": self.mode,
            "pid": os.getpid(),
            "torch": torch.__version__,
            "cuda_runtime": torch.version.cuda,
            "device": torch.cuda.get_device_name(0),
            "step_regex": step_regex,
            "warmup_steps": [],
            "compared_steps": [],
            "threads": {},
            "streams": {},
            "expect": {},
            "kineto": None,
            "notes": [],
        }
        self.note_thread("main")

    @property
    def kineto(self):
        return self.mode == "kineto"

    def note_thread(self, role):
        """Notes the calling thread under ROLE (main, autograd, second-thread...)."""
        t = threading.current_thread()
        entry = {"tid": threading.get_native_id(), "python_name": t.name}
        with self._lock:
            roles = self.manifest["threads"].setdefault(role, [])
            if entry not in roles:
                roles.append(entry)

    def note_other_thread(self, role, native_id, python_name):
        with self._lock:
            self.manifest["threads"].setdefault(role, []).append(
                {"tid": native_id, "python_name": python_name})

    def note_stream(self, role, stream):
        self.manifest["streams"][role] = {"stream_id": stream.stream_id,
                                          "cuda_stream": hex(stream.cuda_stream),
                                          "priority": stream.priority}

    def autograd_hook(self):
        """A tensor hook that notes the thread running the backward pass (autograd's)."""
        def hook(grad):
            self.note_thread("autograd")
            return None
        return hook

    @contextlib.contextmanager
    def step(self, name, warmup=False):
        """A step range; compared steps must run inside compared()."""
        self.manifest["warmup_steps" if warmup else "compared_steps"].append(name)
        with rng(name):
            yield

    @contextlib.contextmanager
    def compared(self, record_shapes=False, emit_nvtx=False, **experimental):
        """The compared steps: under the profiler in kineto mode, plain otherwise.

        RECORD_SHAPES asks Kineto for input shapes; EMIT_NVTX runs the gpucap
        mode's steps under torch.autograd.profiler.emit_nvtx (with the same
        record_shapes), which marks every operator with an NVTX range.
        EXPERIMENTAL names torch._C._profiler._ExperimentalConfig options
        (e.g. profile_all_threads=True, enable_cuda_sync_events=True); those
        this torch lacks are dropped and noted in the manifest.
        """
        torch.cuda.synchronize()
        if not self.kineto:
            if emit_nvtx:
                self.manifest["emit_nvtx"] = {"record_shapes": record_shapes}
                with torch.autograd.profiler.emit_nvtx(record_shapes=record_shapes):
                    yield
                    torch.cuda.synchronize()
                return
            yield
            torch.cuda.synchronize()
            return
        from torch.profiler import ProfilerActivity, profile
        config, used = None, {}
        if experimental:
            try:
                config = torch._C._profiler._ExperimentalConfig(**experimental)
                used = dict(experimental)
            except TypeError as e:
                self.manifest["notes"].append(f"experimental_config {experimental} refused: {e}")
        path = os.path.join(self.out, f"{self.name}.kineto.json")
        kwargs = {"experimental_config": config} if config is not None else {}
        if record_shapes:
            kwargs["record_shapes"] = True
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **kwargs) as prof:
            yield
            torch.cuda.synchronize()
        prof.export_chrome_trace(path)
        self.manifest["kineto"] = {"trace": os.path.basename(path),
                                   "activities": ["CPU", "CUDA"],
                                   "record_shapes": record_shapes,
                                   "experimental_config": used}

    def write(self):
        path = os.path.join(self.out, f"{self.name}.{self.mode}.manifest.json")
        with open(path, "w") as f:
            json.dump(self.manifest, f, indent=1, default=str)
        print(f"{self.name} ({self.mode}): {len(self.manifest['compared_steps'])} compared steps, "
              f"threads {sorted(self.manifest['threads'])}, wrote {path}", flush=True)
