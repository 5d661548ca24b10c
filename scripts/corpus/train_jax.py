"""A JAX training job: an MLP (3 dense layers, d=512, GELU) on synthetic data, Adam written
out by hand, one jitted step (value_and_grad and the update) called STEPS times (argv[1],
default 100). XLA's fusions, cuBLAS GEMMs and whatever command buffers XLA builds by default.

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]: scripts/record.py real) profiles the whole run with torch.profiler (CUPTI sees the whole process)
and writes every kernel's name, grid, block, registers and shared memory, counted."""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
d, batch, classes = 512, 256, 100
key = jax.random.PRNGKey(0)
ks = jax.random.split(key, 6)
params = [jax.random.normal(ks[0], (d, d)) * 0.04, jax.random.normal(ks[1], (d, d)) * 0.04,
          jax.random.normal(ks[2], (d, classes)) * 0.04]
xs = jax.random.normal(ks[3], (8, batch, d))
ys = jax.random.randint(ks[4], (8, batch), 0, classes)


def loss_fn(p, x, y):
    h = jax.nn.gelu(x @ p[0])
    h = jax.nn.gelu(h @ p[1])
    logits = h @ p[2]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


@jax.jit
def train_step(p, m, v, t, x, y):
    loss, g = jax.value_and_grad(loss_fn)(p, x, y)
    m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
    v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
    t = t + 1
    p = [w - 1e-3 * (a / (1 - 0.9 ** t)) / (jnp.sqrt(b / (1 - 0.999 ** t)) + 1e-8)
         for w, a, b in zip(p, m, v)]
    return p, m, v, t, loss


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

m = [jnp.zeros_like(w) for w in params]
v = [jnp.zeros_like(w) for w in params]
t = jnp.float32(0)
first = None
with cupti_truth(truth_path):
    for i in range(steps):
        params, m, v, t, loss = train_step(params, m, v, t, xs[i % 8], ys[i % 8])
        if first is None:
            first = float(loss)
    last = float(loss)
print(f"steps={steps} loss_decreased={last < first}")
