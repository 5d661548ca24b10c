"""jax_loops.py (or, with argv[2] "cmdbuf", jax_cmdbuf.py: conditional command buffers) at a
given length, for scripts/record_longjobs.sh: JAX_LOOPS_CALLS=argv[1] calls of each loop,
traced without CUPTI (TRUTH_CUPTI=0, no truth file: CUPTI in the process changes how the
driver replays graphs, docs/graphs.md)."""
import os
import runpy
import sys

os.environ["JAX_LOOPS_CALLS"] = sys.argv[1] if len(sys.argv) > 1 else "10"
os.environ["TRUTH_CUPTI"] = "0"
script = "jax_cmdbuf.py" if sys.argv[2:3] == ["cmdbuf"] else "jax_loops.py"
sys.argv = [sys.argv[0]]
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), script),
               run_name="__main__")
