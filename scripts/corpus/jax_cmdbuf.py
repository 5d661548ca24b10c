"""jax_loops.py with XLA's conditional command buffers on (issue 25): XLA_FLAGS asks for
WHILE and CONDITIONAL command buffers and graphs of any size, so the while loop and the
scan run as CUDA graphs with CONDITIONAL nodes (WHILE bodies the GPU repeats itself) rather
than as host loops. The program, its output and its truth (CUPTI) are jax_loops.py's.

Usage: python3 scripts/corpus/jax_cmdbuf.py [TRUTH.json]"""
import os
import runpy

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
                           "+WHILE,+CONDITIONAL --xla_gpu_graph_min_graph_size=1").strip()
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_loops.py"),
               run_name="__main__")
