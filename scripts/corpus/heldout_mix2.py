"""A second job of launch paths the rest of the corpus does not take (session 36), STEPS
steps (argv[1], default 20), each step:

- kernels whose parameters pass the old 4 KB limit (CUDA 12.1 and later: up to 32,764
  bytes on Volta and newer): a struct of 1,024, 6,144 and 32,000 bytes passed by value,
  built by NVRTC, each launched by cuLaunchKernel, the 6 KB one also by cuLaunchKernelEx
  with a priority and a memory-synchronisation-domain attribute. Each kernel adds up its
  struct's words; the host checks the sum;
- PyTorch on the stream-ordered allocator (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,
  set before torch loads: cuMemAllocAsync and cuMemFreeAsync from a memory pool): an MLP
  trained with AdamW, and its forward pass captured once as a CUDA graph and replayed
  every step;
- a matmul on a high-priority stream between two timing events, joined to the main stream.

What each step computed is printed (the same natively and traced). TL_CUPTI_TRUTH=PATH (or
PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI) and writes every
kernel's name, grid, block, registers and shared memory, counted."""
import ctypes
import os
import sys

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from _cupti import cupti_truth  # noqa: E402
from tracer.builtin import compile_nvrtc  # noqa: E402
from tracer.cudaapi import _modules, check  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")

WORDS = {"big_param_1k": 256, "big_param_6k": 1536, "big_param_32k": 8000}
SRC = "template <int N> struct Words { unsigned int w[N]; };\n" + "".join(f'''
extern "C" __global__ void {name}(Words<{n}> p, unsigned int *out) {{
    unsigned int s = 0;
    for (int i = threadIdx.x; i < {n}; i += blockDim.x) s += p.w[i];
    atomicAdd(out, s);
}}''' for name, n in WORDS.items())

dev = torch.device("cuda")
torch.manual_seed(0)
torch.zeros(1, device=dev)          # the primary context, made by torch
driver, _ = _modules()
check(driver.cuInit(0), "cuInit")
cu_dev = check(driver.cuDeviceGet(torch.cuda.current_device()), "cuDeviceGet")
ctx = check(driver.cuDevicePrimaryCtxRetain(cu_dev), "cuDevicePrimaryCtxRetain")
check(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
major, minor = torch.cuda.get_device_capability()
module = check(driver.cuModuleLoadData(compile_nvrtc(SRC, f"{major}{minor}", b"big_param.cu")),
               "cuModuleLoadData")
funcs = {name: check(driver.cuModuleGetFunction(module, name.encode()), name) for name in WORDS}


def launch_big(name, step, out, ex=False):
    """One launch of `name` with its struct's words made from the step; the sum expected."""
    n = WORDS[name]
    words = (ctypes.c_uint32 * n)(*((step * 7919 + i * 2654435761) & 0xFFFFFFFF for i in range(n)))
    outp = ctypes.c_uint64(out.data_ptr())
    ptrs = (ctypes.c_void_p * 2)(ctypes.addressof(words), ctypes.addressof(outp))
    stream = torch.cuda.current_stream().cuda_stream
    if not ex:
        check(driver.cuLaunchKernel(funcs[name], 2, 1, 1, 128, 1, 1, 0, stream,
                                    ctypes.addressof(ptrs), 0), f"cuLaunchKernel {name}")
    else:
        cfg = driver.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = 3, 1, 1
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = 64, 1, 1
        cfg.sharedMemBytes = 0
        cfg.hStream = stream
        prio = driver.CUlaunchAttribute()
        prio.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PRIORITY
        prio.value.priority = -1
        dom = driver.CUlaunchAttribute()
        dom.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN
        dom.value.memSyncDomain = driver.CUlaunchMemSyncDomain.CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE
        cfg.attrs = [prio, dom]
        cfg.numAttrs = 2
        check(driver.cuLaunchKernelEx(cfg, funcs[name], ctypes.addressof(ptrs), 0),
              f"cuLaunchKernelEx {name}")
    grid = 3 if ex else 2      # every block adds the whole struct
    return grid * sum(words) & 0xFFFFFFFF


model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                            torch.nn.Linear(2048, 512)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(64, 512, device=dev)
target = torch.randn(64, 512, device=dev)
static_x = torch.randn(32, 512, device=dev)
side = torch.cuda.Stream(priority=-1)
w = torch.randn(1024, 1024, device=dev)

with cupti_truth(truth_path):
    # the forward pass as a graph: warmed up on a side stream, captured, replayed each step
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm), torch.no_grad():
        for _ in range(2):
            model(static_x)
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_y = model(static_x)
    rows = []
    for step in range(steps):
        out = torch.zeros(4, dtype=torch.int32, device=dev)
        want = [launch_big("big_param_1k", step, out[0:1]),
                launch_big("big_param_6k", step, out[1:2]),
                launch_big("big_param_32k", step, out[2:3]),
                launch_big("big_param_6k", step, out[3:4], ex=True)]
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        static_x.copy_(x[:32] * 0.5)
        graph.replay()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            start.record()
            ww = w @ w
            end.record()
        torch.cuda.current_stream().wait_stream(side)
        got = [v & 0xFFFFFFFF for v in out.tolist()]
        end.synchronize()
        rows.append((got == want and start.elapsed_time(end) >= 0.0, round(loss.item(), 4),
                     round(static_y.sum().item(), 2), round(ww.norm().item() / 1e3, 1)))
    torch.cuda.synchronize()
print(f"steps={steps} sums_ok={all(r[0] for r in rows)} first={rows[0][1:4]} last={rows[-1][1:4]}")
