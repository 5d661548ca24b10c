"""A JAX data-parallel training job on 2 GPUs in one process: train_jax.py's MLP (3 dense
layers, d=512, GELU) and hand-written Adam, one jax.jit step over a Mesh of the first two
devices (axis "dp"): the batch (256 rows a GPU) is sharded over both, the parameters and
Adam's moments replicated, so XLA's SPMD partitioner all-reduces the gradients (and the
loss) through NCCL inside the step; XLA drives both GPUs from this one process. The step is
called STEPS times (argv[1], default 100), cycling over 8 fixed batches.

Data and initial parameters come from numpy's default_rng(0) and go to the GPUs as copies,
so every kernel of the run is inside the CUPTI window below. Prints the first and last loss
(2 decimals) and whether each parameter's two replicas are bit-identical after training.

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI
sees both GPUs of the process) and writes every kernel's name, grid, block, registers and
shared memory, counted (scripts/corpus/_cupti.py)."""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
    os.environ.setdefault(k, "0" if k == "NCCL_NVLS_ENABLE" else "1")   # no NVLink multicast
import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
NDEV = 2
d, batch, classes = 512, 256, 100           # batch: rows per GPU
devices = jax.devices()                     # the GPU client for every device (no kernels)
if len(devices) < NDEV:
    sys.exit(f"train_jax_dp.py: needs {NDEV} GPUs, JAX sees {devices}")
mesh = Mesh(np.array(devices[:NDEV]), ("dp",))
repl = NamedSharding(mesh, P())             # on both GPUs, whole
rows = NamedSharding(mesh, P("dp"))         # split along the first axis

rng = np.random.default_rng(0)
params_h = [(rng.standard_normal((d, d)) * 0.04).astype(np.float32),
            (rng.standard_normal((d, d)) * 0.04).astype(np.float32),
            (rng.standard_normal((d, classes)) * 0.04).astype(np.float32)]
xs_h = rng.standard_normal((8, NDEV * batch, d)).astype(np.float32)
ys_h = rng.integers(0, classes, (8, NDEV * batch)).astype(np.int32)


def loss_fn(p, x, y):
    h = jax.nn.gelu(x @ p[0])
    h = jax.nn.gelu(h @ p[1])
    logits = h @ p[2]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


def train_step(p, m, v, t, x, y):
    loss, g = jax.value_and_grad(loss_fn)(p, x, y)   # the mean over the global batch: XLA
    m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]    # all-reduces the per-GPU partial sums
    v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
    t = t + 1
    p = [w - 1e-3 * (a / (1 - 0.9 ** t)) / (jnp.sqrt(b / (1 - 0.999 ** t)) + 1e-8)
         for w, a, b in zip(p, m, v)]
    return p, m, v, t, loss


step_fn = jax.jit(train_step, in_shardings=(repl, repl, repl, repl, rows, rows),
                  out_shardings=repl, donate_argnums=(0, 1, 2, 3))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

first = None
with cupti_truth(truth_path):
    params = [jax.device_put(w, repl) for w in params_h]
    m = [jax.device_put(np.zeros_like(w), repl) for w in params_h]
    v = [jax.device_put(np.zeros_like(w), repl) for w in params_h]
    t = jax.device_put(np.float32(0), repl)
    batches = [(jax.device_put(xs_h[i], rows), jax.device_put(ys_h[i], rows)) for i in range(8)]
    for i in range(steps):
        x, y = batches[i % 8]
        params, m, v, t, loss = step_fn(params, m, v, t, x, y)
        if first is None:
            first = float(loss)
    last = float(loss)
    same = all(len(w.addressable_shards) == NDEV and
               all(np.array_equal(np.asarray(s.data), np.asarray(w.addressable_shards[0].data))
                   for s in w.addressable_shards) for w in params)
print(f"steps={steps} devices={NDEV} first_loss={first:.2f} last_loss={last:.2f} "
      f"loss_decreased={last < first} replicas_equal={same}")
