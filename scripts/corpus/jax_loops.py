"""JAX loops on the GPU (issue 25): a jit of lax.scan over value_and_grad (a few steps of
gradient descent on a small MLP) and a jit of lax.while_loop, each called 10 times. XLA
runs them as command buffers (CUDA graphs) that it builds node by node, with child graphs
and conditional nodes for the loops, as it does by default: XLA_FLAGS is left as the
environment gives it (the record notes say what it was).

Truth (first argument, JSON): every kernel the GPU ran during the 10 calls of each, from
CUPTI (scripts/corpus/_truth.py CuptiKernels: name, grid, block, registers, shared memory),
the loops' trip counts, jax's version and XLA_FLAGS."""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

import _truth  # noqa: E402

CALLS, STEPS = int(os.environ.get("JAX_LOOPS_CALLS", "10")), 6     # (scripts/corpus/jax_loops_long.py)


def loss(params, x, y):
    w1, w2 = params
    h = jnp.tanh(x @ w1)
    return jnp.mean((h @ w2 - y) ** 2)


@jax.jit
def train(params, x, y):
    def step(p, _):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.05 * g, p, grads), value
    return lax.scan(step, params, None, length=STEPS)


@jax.jit
def halve_until_small(v):
    def cond(c):
        i, a = c
        return jnp.logical_and(jnp.max(jnp.abs(a)) > 1.0, i < 100)

    def body(c):
        i, a = c
        return i + 1, a * 0.5
    return lax.while_loop(cond, body, (jnp.int32(0), v))


key = jax.random.PRNGKey(0)
k1, k2, k3 = jax.random.split(key, 3)
params = (jax.random.normal(k1, (64, 128)) * 0.1, jax.random.normal(k2, (128, 16)) * 0.1)
x = jax.random.normal(k3, (256, 64))
y = jnp.zeros((256, 16))
v = jnp.linspace(-300.0, 300.0, 4096, dtype=jnp.float32)

train(params, x, y)[1].block_until_ready()          # compile outside the profiled part
halve_until_small(v)[1].block_until_ready()
with _truth.CuptiKernels() as scan_k:
    p = params
    for _ in range(CALLS):
        p, losses = train(p, x, y)
    losses.block_until_ready()
with _truth.CuptiKernels() as while_k:
    for _ in range(CALLS):
        trips, small = halve_until_small(v)
    small.block_until_ready()
_truth.write({"jax": jax.__version__, "devices": [str(d) for d in jax.devices()],
              "xla_flags": os.environ.get("XLA_FLAGS"),
              "scan": {"calls": CALLS, "steps": STEPS, "cupti": scan_k.to_json()},
              "while": {"calls": CALLS, "trips": int(trips), "cupti": while_k.to_json()}})
print(f"jax loops loss={float(losses[-1]):.4f} trips={int(trips)} "
      f"max={float(jnp.max(jnp.abs(small))):.3f}")
