"""JAX jit of a matmul, tanh and a reduction (XLA: cuBLAS plus generated fusion kernels)."""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


@jax.jit
def f(a, b):
    return jnp.tanh(a @ b).sum(axis=0) * 0.5


a = jnp.linspace(-1.0, 1.0, 256 * 256, dtype=jnp.float32).reshape(256, 256)
b = jnp.eye(256, dtype=jnp.float32) * 0.25
for _ in range(3):
    r = f(a, b)
r.block_until_ready()
print(f"jax devices={jax.devices()[0].platform} sum={float(r.sum()):.3f}")
