"""A large zstd fatbin entry is decompressed into a temporary file and read where it lies
(decoders/cubin/fatbin.py FILE_PAYLOAD): a 2-rank FSDP job's 10.7 MiB library image holds a
100 MiB sm_90 cubin, which took its decode from 255 to 346 MiB when held in memory. The
cubin read from the file must be the same, bounds and bombs as before."""
import mmap
import tracemalloc

import pytest
import zstandard

from conftest import bench_module, capture_bytes
from decoders.cubin import fatbin as FB
from decoders.cubin import image_cubin
from decoders.errors import CaptureError

bombs = bench_module("bombs")


def test_a_large_entry_goes_to_a_file_not_memory():
    size = 64 << 20
    stream = bombs.zstd_rle(size // bombs.ZSTD_MAX_BLOCK)
    tracemalloc.start()
    try:
        out = FB.decompress_payload("zstd", stream, size, 0, to_file=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(out, mmap.mmap) and len(out) == size
    assert peak < 4 << 20, peak          # chunks of ZSTD_READ_CHUNK, never the whole
    assert out[:8] == out[size - 8:] and len(set(out[:4096])) == 1
    # the same stream past what the header declares is still refused
    with pytest.raises(CaptureError, match="decompresses past"):
        FB.decompress_payload("zstd", stream, size - 1, 0, to_file=True)


def test_a_cubin_read_from_the_file_is_the_one_held_in_memory(monkeypatch):
    image = bombs.capture_image(capture_bytes("runtime-vadd"))
    held = image_cubin(image, 90)
    elf = bytes(held.data)
    fatbin = bombs.fatbin_with(zstandard.ZstdCompressor().compress(elf),
                               FB.FATBIN_COMPRESS_ZSTD, len(elf), image)
    monkeypatch.setattr(FB, "FILE_PAYLOAD", 1)
    mapped = image_cubin(fatbin, 90)
    assert isinstance(mapped.data, mmap.mmap) and mapped.data[:] == elf
    assert mapped.kernel_names == held.kernel_names and mapped.arch == held.arch
    for name in held.kernel_names:
        a, b = held.kernel(name), mapped.kernel(name)
        assert (a.registers, a.params, a.param_base) == (b.registers, b.params, b.param_base)
        # (offsets differ: the held cubin sat uncompressed at an offset in its image)
        assert [dict(x.to_json(), offset=None) for x in a.attributes] == \
            [dict(x.to_json(), offset=None) for x in b.attributes]
        assert a.attributes
    mapped.release()
    assert mapped.data is None
