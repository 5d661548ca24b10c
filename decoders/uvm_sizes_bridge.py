"""The UVM parameter-size table the shim compiles in (plain UVM request number -> bytes).

UVM requests are plain integers with no _IOC size bits, so the shim must not guess a
size from them (UVM_INITIALIZE = 0x30000001 would read as 12 KiB). The table lives in
decoders/uvm/sizes.py (UVM_PARAM_SIZES); until that module exists this falls back to the
sizes listed in shared/reference/hw-facts.md 6.4 (gdb on the 580.105.08 headers).
"""

_FALLBACK = {
    0x30000001: 16,   # UVM_INITIALIZE_PARAMS
    0x30000002: 0,    # UVM_DEINITIALIZE: no params
    0x17: 16,         # UVM_CREATE_RANGE_GROUP_PARAMS
    0x19: 32,         # UVM_REGISTER_GPU_VASPACE_PARAMS
    0x1B: 56,         # UVM_REGISTER_CHANNEL_PARAMS
    0x1D: 36,         # UVM_ENABLE_PEER_ACCESS_PARAMS
    0x21: 9264,       # UVM_MAP_EXTERNAL_ALLOCATION_PARAMS
    0x22: 24,         # UVM_FREE_PARAMS (580 layout has `length`)
    0x25: 40,         # UVM_REGISTER_GPU_PARAMS
    0x27: 8,          # UVM_PAGEABLE_MEM_ACCESS_PARAMS
    0x42: 40,         # UVM_UNMAP_EXTERNAL_PARAMS
    0x44: 9248,       # UVM_ALLOC_SEMAPHORE_POOL_PARAMS
    0x49: 24,         # UVM_CREATE_EXTERNAL_RANGE_PARAMS
    0x4B: 8,          # UVM_MM_INITIALIZE_PARAMS
}


def uvm_param_sizes():
    try:
        from decoders.uvm.sizes import UVM_PARAM_SIZES
    except ImportError:
        return dict(_FALLBACK)
    return dict(UVM_PARAM_SIZES)
