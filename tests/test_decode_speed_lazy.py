"""Parts of a launch summary made when the summary is first read, not while decoding
(decoders/launch/summary.py Launch): cbank0_driver from the driver constants' bytes. The summary
read equals the one made at once, whether the launch stayed in memory or was spilled
(keep=0: its bytes went through marshal) or its summary was read before it was spilled."""

import pytest

from decoders import launch as L
from decoders.session import _launch_dump, _launch_load, decode_capture

from tests.conftest import capture_path as _path


@pytest.mark.parametrize("name", ["builtin-vadd", "torch-small", "launch-shapes"])
def test_driver_constants_made_on_read(name):
    model = decode_capture(_path(name), keep=None)
    kernels = 0
    for launch in model.launches:
        pending = launch._driver
        assert launch._summary["cbank0_driver"] is None
        s = launch.summary
        if pending is None:             # no valid constant bank 0 (the GRID_NULL QMDs)
            assert s["cbank0_driver"] is None
            continue
        kernels += 1
        arch, driver, upload = pending
        drv = s["cbank0_driver"]
        # what _params made at once before: the bytes' hex and the fields ARCH_CBANK0 names
        assert drv["hex"] == driver.hex() and drv["size"] == len(driver)
        assert drv["upload_size"] == upload and drv["offset"] == 0
        for field, off, size in L.ARCH_CBANK0[arch]["fields"]:
            if off + size <= len(driver):
                assert drv["fields"][field] == int.from_bytes(driver[off:off + size], "little")
        assert launch._driver is None and launch.summary is s     # made once
    assert kernels


@pytest.mark.parametrize("name", ["builtin-vadd", "torch-small", "two-streams"])
def test_spilled_driver_constants_equal_in_memory(name):
    ref = [l.summary for l in decode_capture(_path(name), keep=None).launches]
    for keep in (0, 3):
        model = decode_capture(_path(name), keep=keep)
        assert [l.summary for l in model.launches] == ref


def test_dump_carries_bytes_until_read():
    """A launch not yet read is spilled with its driver constants as bytes; one read
    before it is spilled carries the dict; both load to the same summary."""
    model = decode_capture(_path("builtin-vadd"), keep=None)
    launch = next(l for l in model.launches if l._driver is not None)
    t = _launch_dump(launch)
    assert isinstance(t[-1][1], bytes) and t[0]["cbank0_driver"] is None
    lazy = _launch_load(t).summary
    s = launch.summary
    t = _launch_dump(launch)
    assert t[-1] is None and t[0]["cbank0_driver"] is s["cbank0_driver"]
    assert _launch_load(t).summary == s == lazy
