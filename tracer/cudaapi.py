"""cuda-python access (driver API and NVRTC), imported only where a GPU is needed."""


def _modules():
    try:
        from cuda.bindings import driver, nvrtc
    except ImportError:
        from cuda import cuda as driver, nvrtc   # cuda-python < 12.6 layout
    return driver, nvrtc


class CudaError(Exception):
    pass


def check(result, what):
    """cuda-python returns (err, *values): raise on error, else return the values."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise CudaError(f"{what} failed: {err!r}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def device_info(ordinal=0):
    driver, _ = _modules()
    check(driver.cuInit(0), "cuInit")
    dev = check(driver.cuDeviceGet(ordinal), "cuDeviceGet")
    name = check(driver.cuDeviceGetName(100, dev), "cuDeviceGetName")
    attr = driver.CUdevice_attribute
    major = check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "attr")
    minor = check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "attr")
    version = check(driver.cuDriverGetVersion(), "cuDriverGetVersion")
    # every GPU the program may use: the exit step keeps the fatbin entries any of them runs
    every = []
    for n in range(check(driver.cuDeviceGetCount(), "cuDeviceGetCount")):
        d = check(driver.cuDeviceGet(n), "cuDeviceGet")
        cc = tuple(check(driver.cuDeviceGetAttribute(a, d), "attr") for a in (
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
        every.append("%d.%d" % cc)
    return {"gpu": bytes(name).split(b"\0")[0].decode(), "compute_capability": f"{major}.{minor}",
            "compute_capabilities": sorted(set(every)), "cuda_driver_api": version}


def open_module(source_name, ordinal=0):
    """cuInit, the primary context made current, and kernels/<source_name> compiled by NVRTC
    for this GPU and loaded. Returns (driver, module, arch digits such as "90")."""
    from tracer.builtin import compile_nvrtc, kernel_source
    driver, _ = _modules()
    check(driver.cuInit(0), "cuInit")
    dev = check(driver.cuDeviceGet(ordinal), "cuDeviceGet")
    attr = driver.CUdevice_attribute
    major = check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cc")
    minor = check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cc")
    ctx = check(driver.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    check(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    arch = f"{major}{minor}"
    cubin = compile_nvrtc(kernel_source(source_name), arch, source_name.encode())
    module = check(driver.cuModuleLoadData(cubin), "cuModuleLoadData")
    return driver, module, arch


def launch(driver, f, grid, block, smem, ptrs, cluster=None, what="launch"):
    """cuLaunchKernel, or cuLaunchKernelEx with a cluster-dimension attribute when `cluster`
    is given; `ptrs` is a ctypes array of the argument pointers (kernelParams)."""
    import ctypes
    if cluster is None:
        return check(driver.cuLaunchKernel(f, *grid, *block, smem, 0, ctypes.addressof(ptrs), 0),
                     f"cuLaunchKernel {what}")
    cfg = driver.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
    cfg.sharedMemBytes = smem
    cfg.hStream = 0
    at = driver.CUlaunchAttribute()
    at.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    at.value.clusterDim.x, at.value.clusterDim.y, at.value.clusterDim.z = cluster
    cfg.attrs = [at]
    cfg.numAttrs = 1
    return check(driver.cuLaunchKernelEx(cfg, f, ctypes.addressof(ptrs), 0),
                 f"cuLaunchKernelEx {what}")
