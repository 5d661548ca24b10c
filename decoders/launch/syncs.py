"""Semaphore methods as synchronisation: which operation a semaphore method performs (the
field its class declares: host SEM_EXECUTE and compute SET_REPORT_SEMAPHORE_D `OPERATION`,
copy LAUNCH_DMA `SEMAPHORE_TYPE`), and whether a release's payload lets a wait go on; and
the direction of a copy engine transfer, from where its two sides' memory is."""
from decoders.fields import any_common_bits, bits

MAX_RELEASES = 65536    # semaphore addresses remembered per process (oldest dropped first)


def sync_operation(sem):
    """The rendered operation of a semaphore method ("RELEASE", "ACQ_CIRC_GEQ", ...), or None
    when its fields name none (a QMD's release)."""
    fields = sem.get("fields") or {}
    op = fields.get("OPERATION", fields.get("SEMAPHORE_TYPE"))
    return op if isinstance(op, str) else None


def acquire_satisfied(op, released, wanted):
    """Whether a semaphore holding `released` lets a wait of operation `op` for `wanted` go
    on (host class SEM_EXECUTE semantics: ACQUIRE equal, ACQ_STRICT_GEQ / ACQ_GEQ greater or
    equal, ACQ_CIRC_GEQ greater or equal modulo 2^32 within half the range, ACQ_AND any
    common bit, ACQ_NOR no common bit). None for an operation not listed."""
    if op == "ACQUIRE":
        return released == wanted
    if op in ("ACQ_STRICT_GEQ", "ACQ_GEQ"):
        return released >= wanted
    if op == "ACQ_CIRC_GEQ":
        return bits(released - wanted, 0, 32) < 0x80000000
    if op == "ACQ_AND":
        return any_common_bits(released, wanted)
    if op == "ACQ_NOR":
        return not any_common_bits(released, wanted)
    return None


def count_sync(counts, entry):
    """Count one syncs[] entry into `counts` (a Counter: docs/json.md stats.syncs)."""
    if not entry["waits"]:
        counts["releases_without_launch"] += 1
        return
    by = entry.get("released_by")
    counts["waits"] += 1
    if by and by.get("reduction"):
        # the last release there is an atomic (RED_ADD): the value it leaves is not known
        counts["waits_after_reduction"] += 1
    else:
        counts["waits_released_by_another_channel" if by and by["channel"] != entry["channel"]
               else "waits_released_by_its_channel" if by else "waits_no_release_before"] += 1
    if by and by.get("gpu") is not None and by["gpu"] != entry.get("gpu"):
        counts["waits_on_another_gpu"] += 1     # one GPU waits for another


def copy_direction(src_on, dst_on, fill=False):
    """'host to device', 'device to host', 'device to device' (one GPU), 'between GPUs',
    'host to host', 'fill (host)' / 'fill (device)' (a remapped transfer of constants: no
    source memory) or 'unknown', from each side's 'host' / GPU index / None."""
    if fill:
        return "fill (host)" if dst_on == "host" else "fill (device)" if dst_on is not None \
            else "unknown"
    if src_on is None or dst_on is None:
        return "unknown"
    if src_on == "host":
        return "host to host" if dst_on == "host" else "host to device"
    if dst_on == "host":
        return "device to host"
    return "device to device" if src_on == dst_on else "between GPUs"
