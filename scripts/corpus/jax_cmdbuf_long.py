"""scripts/corpus/jax_loops_long.py STEPS cmdbuf (record_longjobs.sh passes one argument)."""
import os
import runpy
import sys

sys.argv = [sys.argv[0], sys.argv[1] if len(sys.argv) > 1 else "10", "cmdbuf"]
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_loops_long.py"),
               run_name="__main__")
