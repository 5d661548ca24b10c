"""bench/fuzz.py's compressed-image bombs (bench/mutators.py image_bomb) and --jobs merging,
without a GPU and in a few seconds: the bomb really is a fatbin entry declaring a
compressed payload that the generator made, and a short bomb-only campaign makes cubin and
capture image bombs that decode with no crash. The bombs themselves, decoded by the real
`trace-decode`, are tests/test_image_bombs.py."""
import multiprocessing
import random

from conftest import ROOT, bench_module, capture_bytes
from decoders.cubin import fatbin as FB

fuzz = bench_module("fuzz")
mutators, bombs = fuzz.mutators, fuzz.bombs
FIXTURES = ROOT / "tests" / "fixtures" / "cubins"
COMPRESSION = FB.FATBIN_COMPRESS_ZSTD | FB.FATBIN_COMPRESS_LZ4


def _entries(fatbin):
    """[(entry header, stored bytes)] of the first fatbin, walked with the declarations."""
    head = FB.FATBIN_HEADER.parse(fatbin[:FB.FATBIN_HEADER_SIZE])
    pos, end = head.header_size, head.header_size + head.fat_size
    assert end <= len(fatbin)
    out = []
    while pos < end:
        e = FB.FATBIN_ENTRY_HEADER.parse(fatbin[pos:end])
        out.append((e, fatbin[pos + e.header_size:pos + e.header_size + e.size]))
        pos += e.header_size + e.size
    assert pos == end
    return out


def _recorded(monkeypatch):
    """The streams and declared sizes image_bomb asks for, as the generators return them."""
    made = []
    real_stream, real_size = mutators.bomb_stream, mutators.declared_size

    def stream(rng):
        made.append(dict(zip(("payload", "flags", "true", "what"), real_stream(rng))))
        return tuple(made[-1].values())

    def size(rng, true, stored):
        made[-1]["declared"], made[-1]["dname"] = real_size(rng, true, stored)
        return made[-1]["declared"], made[-1]["dname"]
    monkeypatch.setattr(mutators, "bomb_stream", stream)
    monkeypatch.setattr(mutators, "declared_size", size)
    return made


def _check_bomb(fatbin, original, made):
    """Exactly one entry differs from `original`'s (a fatbin, or a raw ELF wrapped as one
    entry): it holds the generator's payload, flagged with its compression, declaring the
    chosen size; the others are the original's bytes."""
    new, old = _entries(fatbin), _entries(mutators.as_fatbin(original)[0])
    assert len(new) == len(old)
    changed = [i for i, (a, b) in enumerate(zip(new, old)) if a != b]
    assert len(changed) == 1, changed
    e, stored = new[changed[0]]
    assert e.flags & COMPRESSION == made["flags"] and e.flags & COMPRESSION
    assert e.compressed_size == len(made["payload"])
    assert stored[:e.compressed_size] == made["payload"] and e.size == len(stored)
    assert e.decompressed_size == made["declared"]
    assert (e.kind, e.arch) == (old[changed[0]][0].kind, old[changed[0]][0].arch)


def test_image_bomb_is_a_fatbin_entry_of_the_generators_bytes(monkeypatch):
    made = _recorded(monkeypatch)
    rng = random.Random(11)
    raw = (FIXTURES / "shapes.sm_90.cubin").read_bytes()
    two = (FIXTURES / "shapes.sm_90.size.fatbin").read_bytes()
    for original in (raw, two) * 20:
        out, desc = mutators.image_bomb(rng, fuzz.Base("cubin", "c", original))
        assert desc.startswith("image ") and made[-1]["what"] in desc
        _check_bomb(out, original, made[-1])
    # the raw cubin was wrapped as an sm_90 ELF entry
    assert _entries(mutators.as_fatbin(raw)[0])[0][0].arch == 90
    # every generator and every kind of declared size came up
    assert {m["what"].split()[0] + (" RLE" if "RLE" in m["what"] else "") for m in made} \
        >= {"zstd", "zstd RLE", "lz4"} and any("random" in m["what"] for m in made)
    assert {m["dname"] for m in made} >= {"tiny", "true-ish", "at the cap", "absurd"}
    caps = {m["declared"] for m in made if m["dname"] == "at the cap"}
    assert FB.IMAGE_DECOMPRESS_CAP in caps or FB.IMAGE_DECOMPRESS_CAP - 1 in caps
    # what the generators return is what bench/bombs.py makes
    lz4 = next(m for m in made if m["what"].startswith("lz4 match"))
    assert lz4["payload"] == bombs.lz4_long_match(int(lz4["what"].split()[3]))
    seqs = next(m for m in made if m["what"].endswith(" sequences"))
    assert seqs["payload"] == bombs.zstd_many_sequences(int(seqs["what"].split()[1]))


def test_capture_image_bomb_replaces_the_module_image(monkeypatch):
    made = _recorded(monkeypatch)
    data = fuzz.window(capture_bytes("runtime-vadd"), 8, 4)
    base = fuzz.Base("capture", "w", data)
    image = bombs.capture_image(data)
    rng = random.Random(5)
    for _ in range(6):
        out = mutators.image_bomb(rng, base)
        assert out is not None and out[1].startswith("image of the API_ENTER at ")
        _check_bomb(bombs.capture_image(out[0]), image, made[-1])
        # the records keep their frame: the same record kinds, in order
        assert [t for _, _, t in bombs.spans(out[0])] == [t for _, _, t in base.spans]
    # a window without a module image has no image bomb
    no_image = fuzz.make_capture(data[:base.spans[0][0]], [data[o:o + n] for o, n, _ in
                                                           base.spans[:4] + base.spans[-1:]])
    assert mutators.image_bomb(rng, fuzz.Base("capture", "n", no_image)) is None


def _forked(fn):
    """fn() in a forked child (the campaign sets RLIMIT_AS, SIGALRM and tracemalloc for its
    whole process): its return value."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=lambda: send.send(fn()))
    p.start()
    assert recv.poll(120), "the campaign did not finish"
    res = recv.recv()
    p.join()
    return res


def test_bomb_campaign_makes_cubin_and_capture_image_bombs(monkeypatch):
    """A bomb-only campaign over one capture window with a module image, one fatbin and one
    dump (seed 4: mostly capture image bombs, and a cubin one): no crash, no hang, bounded."""
    data = fuzz.window(capture_bytes("runtime-vadd"), 8, 4)
    bases = [fuzz.Base("capture", "runtime-vadd-window", data),
             fuzz.Base("cubin", "size.fatbin", (FIXTURES / "shapes.sm_90.size.fatbin").read_bytes()),
             fuzz.Base("dump", "nops", bytes(64))]
    monkeypatch.setattr(fuzz, "load_bases", lambda: bases)
    res = _forked(lambda: fuzz.campaign(count=8, seed=4, only_kinds=("bomb",), progress=False))
    assert res["mutants"] == 8
    assert res["bombs"].get("cubin/image", 0) >= 1 and res["bombs"].get("capture/image", 0) >= 1
    assert res["per_kind"]["cubin/bomb"] and res["per_kind"]["capture/bomb"]
    assert res["crashes"] == {} and res["tracebacks"] == 0
    assert set(res["outcomes"]) <= {"ok", "clean"}
    assert res["memory"]["violation_count"] == 0


def test_jobs_merge():
    """--jobs: worker i's seed is seed*1000+i; counts summed, signatures merged, maxima kept."""
    assert [fuzz.worker_seed(7, i) for i in range(3)] == [7000, 7001, 7002]

    def result(seed, n, slow, rss, sigs):
        mem = {"bound": "b", "base_ratio_unmutated": seed % 10,
               "worst_ratio_64k_and_up": {"ratio": slow}, "worst_fraction_of_bound":
               {"of_bound": slow / 10}, "violations": [{"seed": seed}], "violation_count": 1}
        return {"seed": seed, "seconds": 10.0 + slow, "mutants": n, "mutants_per_second": 1,
                "outcomes": {"ok": n - 1, "crash": 1}, "per_kind": {"capture/bomb": {"ok": n}},
                "bombs": {"capture/image": n}, "crashes": sigs, "memory": mem,
                "slowest": {"seconds": slow, "seed": seed}, "peak_rss_bytes": rss,
                "tracebacks": sum(v["count"] for v in sigs.values()), "tool": "t"}
    a = result(7000, 5, 1.0, 300, {"E at x": {"count": 2, "samples": [1, 2]}})
    b = result(7001, 7, 3.0, 200, {"E at x": {"count": 1, "samples": [3, 4]},
                                   "F at y": {"count": 4, "samples": [5]}})
    m = fuzz.merge([a, b], 7)
    assert m["seed"] == 7 and m["worker_seeds"] == [7000, 7001] and m["jobs"] == 2
    assert m["mutants"] == 12 and m["outcomes"] == {"crash": 2, "ok": 10}
    assert m["per_kind"] == {"capture/bomb": {"ok": 12}} and m["bombs"] == {"capture/image": 12}
    assert m["crashes"] == {"F at y": {"count": 4, "samples": [5]},
                            "E at x": {"count": 3, "samples": [1, 2, 3]}}
    assert m["tracebacks"] == 7 and m["peak_rss_bytes"] == 300
    assert m["slowest"]["seed"] == 7001 and m["seconds"] == 13.0
    assert m["memory"]["worst_ratio_64k_and_up"]["ratio"] == 3.0
    assert m["memory"]["violation_count"] == 2 and len(m["memory"]["violations"]) == 2
