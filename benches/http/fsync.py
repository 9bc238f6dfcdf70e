#!/usr/bin/env python3
"""The physical limit of the durable decision log (benches/http/run.sh, issue 24).

A write + fdatasync loop on the log's disk, as askgate's writer does it: append BATCH lines of
LINE bytes to a new file in DIR with one write, sync_data it, again and again for SECONDS. Prints
the syncs per second, the sync's p50 / p99 and the records per second that one batch per sync
of BATCH lines would allow, for each BATCH given. Then the same loop in LANES threads at once
on one file, each with its own descriptor (as several writer threads do, `log_sync_threads`: syncs that overlap),
for each lane count given: the syncs per second the disk completes when they overlap. Then the
one-lane loop again writing into zero-filled room of ROOM bytes, made again when used up, as
askgate's writer does with `log_room_bytes` (audit::writer::room): the sync flushes data alone.

    python3 benches/http/fsync.py DIR [SECONDS=3] [LINE=1700] [BATCH=1,16] [LANES=1,2,3,4] [ROOM=1048576]

The file is removed afterwards. Informational only.
"""

import os
import sys
import threading
import time


def loop(path, seconds, chunk, times):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            os.write(fd, chunk)
            os.fdatasync(fd)
            times.append(time.perf_counter() - started)
    finally:
        os.close(fd)


def room_loop(path, seconds, chunk, room, times):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        end = room_end = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            os.pwrite(fd, chunk, end)
            end += len(chunk)
            if end >= room_end:
                os.pwrite(fd, bytes(room), end)
                room_end = end + room
            os.fdatasync(fd)
            times.append(time.perf_counter() - started)
    finally:
        os.close(fd)


def measure(directory, seconds, line, batch, lanes=1, room=0):
    path = os.path.join(directory, f".fsync-probe-{os.getpid()}")
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    chunk = (b"x" * (line - 1) + b"\n") * batch
    per_lane = [[] for _ in range(lanes)]
    if room:
        threads = [threading.Thread(target=room_loop, args=(path, seconds, chunk, room, per_lane[0]))]
    else:
        threads = [threading.Thread(target=loop, args=(path, seconds, chunk, times)) for times in per_lane]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        os.unlink(path)
    times = sorted(t for lane in per_lane for t in lane)
    mean = sum(times) / len(times)
    p50 = times[len(times) // 2]
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return len(times) / seconds, mean, p50, p99


def main():
    directory = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    line = int(sys.argv[3]) if len(sys.argv) > 3 else 1700
    batches = [int(b) for b in (sys.argv[4] if len(sys.argv) > 4 else "1,16").split(",")]
    lanes = [int(n) for n in (sys.argv[5] if len(sys.argv) > 5 else "1,2,3,4").split(",")]
    room = int(sys.argv[6]) if len(sys.argv) > 6 else 1024 * 1024
    os.makedirs(directory, exist_ok=True)
    print(f"write + fdatasync on {directory} ({seconds:g} s each, {line}-byte lines):")
    print()
    print("| lines per sync | syncs/s | mean ms | p50 ms | p99 ms | records/s at one sync per batch |")
    print("|---:|---:|---:|---:|---:|---:|")
    for batch in batches:
        rate, mean, p50, p99 = measure(directory, seconds, line, batch)
        print(f"| {batch} | {rate:,.0f} | {mean * 1e3:.3f} | {p50 * 1e3:.3f} | {p99 * 1e3:.3f} | {rate * batch:,.0f} |")
    print()
    print(f"overlapping syncs: LANES threads, each its own descriptor, {batches[-1]} lines per sync:")
    print()
    print("| lanes | syncs/s | mean ms | p50 ms | p99 ms | records/s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for count in lanes:
        rate, mean, p50, p99 = measure(directory, seconds, line, batches[-1], count)
        print(f"| {count} | {rate:,.0f} | {mean * 1e3:.3f} | {p50 * 1e3:.3f} | {p99 * 1e3:.3f} | {rate * batches[-1]:,.0f} |")
    print()
    print(f"into zero-filled room ({room} bytes, made again when used up), one lane:")
    print()
    print("| lines per sync | syncs/s | mean ms | p50 ms | p99 ms | records/s at one sync per batch |")
    print("|---:|---:|---:|---:|---:|---:|")
    for batch in batches:
        rate, mean, p50, p99 = measure(directory, seconds, line, batch, room=room)
        print(f"| {batch} | {rate:,.0f} | {mean * 1e3:.3f} | {p50 * 1e3:.3f} | {p99 * 1e3:.3f} | {rate * batch:,.0f} |")


if __name__ == "__main__":
    main()
