# Sourced by the probes that run real jobs under trace-launch after device-setup.sh: NCCL and
# PyTorch kept off NVLink multicast (device KINDS.md), JAX not preallocating the GPU, and TL,
# the CLI without installing it.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false
TL="python3 -m tracer.cli_main"
