"""The daemon's compile cache stays within its bound, evicting the least recently used libraries first.

Real files in a temporary directory stand in for nvcc's output: the cache only copies, stats and removes them.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from runner.host.compile import (
    DEFAULT_CACHE_MAX_BYTES,
    STALE_TMP_S,
    cache_entries,
    cached_library,
    evict_entries,
    evict_lru,
    store_library,
)
from runner.settings import RunnerSettings

KIB = 1024


def built(tmp_path: Path, name: str, size: int) -> Path:
    """A fake library of `size` bytes, as nvcc would leave it in a job's output directory."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    path = out / f"{name}.so"
    path.write_bytes(os.urandom(size))
    return path


def set_age(path: Path, seconds_ago: float) -> None:
    when = time.time() - seconds_ago
    os.utime(path, (when, when))


def entries(cache: Path) -> set[str]:
    return {p.stem for p in cache.glob("*.so")}


def size_of(cache: Path) -> int:
    return sum(p.stat().st_size for p in cache.glob("*.so"))


def test_store_copies_atomically_and_returns_the_cache_path(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    lib = built(tmp_path, "a", 3 * KIB)
    stored = store_library(cache, "a", lib)
    assert stored == cache / "a.so"
    assert stored.read_bytes() == lib.read_bytes()
    assert sorted(p.name for p in cache.iterdir()) == ["a.so"]  # no temporary file left behind
    assert cached_library(cache, "a") == stored


def test_evicts_least_recently_used_first(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for age, key in ((300, "oldest"), (200, "middle"), (100, "newest")):
        set_age(store_library(cache, key, built(tmp_path, key, 4 * KIB)), age)
    assert entries(cache) == {"oldest", "middle", "newest"}

    # 12 KiB cached + 4 KiB new under a 10 KiB bound: the two oldest must go, in that order.
    store_library(cache, "fresh", built(tmp_path, "fresh", 4 * KIB), max_bytes=10 * KIB)
    assert entries(cache) == {"newest", "fresh"}
    assert size_of(cache) <= 10 * KIB


def test_a_hit_refreshes_recency(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for age, key in ((300, "used"), (200, "idle"), (100, "recent")):
        set_age(store_library(cache, key, built(tmp_path, key, 4 * KIB)), age)

    before = (cache / "used.so").stat().st_mtime
    assert cached_library(cache, "used") == cache / "used.so"
    assert (cache / "used.so").stat().st_mtime > before

    # Only one entry has to go; by last use it is "idle", not the older-stored but just-used "used".
    store_library(cache, "fresh", built(tmp_path, "fresh", 4 * KIB), max_bytes=12 * KIB)
    assert entries(cache) == {"used", "recent", "fresh"}


def test_lookup_without_touch_leaves_recency(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    stored = store_library(cache, "k", built(tmp_path, "k", KIB))
    set_age(stored, 100)
    before = stored.stat().st_mtime_ns
    assert cached_library(cache, "k", touch=False) == stored
    assert stored.stat().st_mtime_ns == before


def test_a_miss_touches_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert cached_library(cache, "absent") is None
    assert not cache.exists()


def test_the_entry_just_stored_survives_even_when_larger_than_the_bound(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    set_age(store_library(cache, "small", built(tmp_path, "small", 2 * KIB)), 100)

    stored = store_library(cache, "huge", built(tmp_path, "huge", 64 * KIB), max_bytes=8 * KIB)
    assert stored == cache / "huge.so"
    assert stored.stat().st_size == 64 * KIB
    assert entries(cache) == {"huge"}  # everything else went, the new entry stays over the bound
    assert cached_library(cache, "huge") == stored


def test_the_just_stored_entry_survives_even_with_an_older_mtime_than_the_rest(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for key in ("a", "b"):
        store_library(cache, key, built(tmp_path, key, 4 * KIB))
    target = cache / "a.so"
    set_age(target, 1000)  # as if a clock step made it the oldest
    removed = evict_lru(cache, 4 * KIB, keep=target)
    assert removed == [cache / "b.so"]
    assert entries(cache) == {"a"}


def test_zero_bound_keeps_nothing(tmp_path: Path) -> None:
    """0 turns caching off: the build is not copied in, it is returned as the path to load, and entries left
    from a larger bound are removed."""
    cache = tmp_path / "cache"
    store_library(cache, "old", built(tmp_path, "old", 4 * KIB))
    lib = built(tmp_path, "new", 4 * KIB)

    result = store_library(cache, "new", lib, max_bytes=0)
    assert result == lib
    assert result.read_bytes() == lib.read_bytes()
    assert list(cache.iterdir()) == []
    assert cached_library(cache, "new") is None


def test_negative_bound_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        store_library(tmp_path / "cache", "k", built(tmp_path, "k", KIB), max_bytes=-1)


def test_under_the_bound_nothing_is_evicted(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for key in ("a", "b", "c"):
        store_library(cache, key, built(tmp_path, key, 4 * KIB), max_bytes=12 * KIB)
    assert entries(cache) == {"a", "b", "c"}


def test_eviction_tolerates_files_vanishing(tmp_path: Path) -> None:
    """Another job's eviction may remove entries between this one's scan and its unlink: the stale listing is
    worked through without error, a file already gone counts as removed, and the bound is still met."""
    cache = tmp_path / "cache"
    for age, key in ((300, "a"), (200, "b"), (100, "c")):
        set_age(store_library(cache, key, built(tmp_path, key, 4 * KIB)), age)

    listing = cache_entries(cache)
    assert [e.path.stem for e in listing] == ["a", "b", "c"]
    # The "other job" removes two entries after this one listed them (one of them out of LRU order).
    assert evict_entries([listing[0], listing[2]], 0) == [cache / "a.so", cache / "c.so"]

    removed = evict_entries(listing, 4 * KIB)
    assert removed == [cache / "a.so", cache / "b.so"]
    assert entries(cache) == set()


def test_listing_skips_files_gone_before_stat(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    store_library(cache, "a", built(tmp_path, "a", KIB))
    (cache / "a.so").unlink()
    assert cache_entries(cache) == []
    assert cache_entries(tmp_path / "never-made") == []
    assert evict_lru(tmp_path / "never-made", 0) == []


def test_a_hit_on_an_entry_evicted_meanwhile_is_a_miss(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    store_library(cache, "a", built(tmp_path, "a", KIB))
    evict_lru(cache, 0)
    assert cached_library(cache, "a") is None


def test_concurrent_stores_and_hits_stay_consistent(tmp_path: Path) -> None:
    """Many threads storing (some the same key, as two jobs of one daemon may) and evicting at once: no error,
    no torn or temporary file left, every surviving entry intact and the bound respected at the end."""
    cache = tmp_path / "cache"
    sources = {f"k{i}": built(tmp_path, f"k{i}", (i % 4 + 1) * KIB) for i in range(16)}
    bound = 12 * KIB
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def worker(n: int) -> None:
        try:
            start.wait()
            for round_ in range(30):
                key = f"k{(n * 7 + round_) % 16}"
                if cached_library(cache, key) is None:
                    store_library(cache, key, sources[key], max_bytes=bound)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]
    for path in cache.glob("*.so"):
        assert path.read_bytes() == sources[path.stem].read_bytes()
    evict_lru(cache, bound)
    assert size_of(cache) <= bound


def test_stale_temporary_files_are_removed_fresh_ones_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    stale = cache / ".dead.123.tmp"
    stale.write_bytes(b"x" * KIB)
    set_age(stale, STALE_TMP_S + 60)
    in_flight = cache / ".live.456.tmp"
    in_flight.write_bytes(b"x" * KIB)
    store_library(cache, "k", built(tmp_path, "k", KIB))
    assert not stale.exists()
    assert in_flight.exists()


def test_symlinks_are_neither_hits_nor_counted(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    outside = built(tmp_path, "outside", 64 * KIB)
    (cache / "link.so").symlink_to(outside)
    assert cached_library(cache, "link") is None
    store_library(cache, "k", built(tmp_path, "k", KIB), max_bytes=4 * KIB)
    assert outside.exists()
    assert entries(cache) == {"k", "link"}


def test_setting_default_matches_the_module_default() -> None:
    field = RunnerSettings.model_fields["cache_max_mb"]
    assert field.default * 1024 * 1024 == DEFAULT_CACHE_MAX_BYTES


def test_setting_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNNER_CACHE_MAX_MB", "0")
    assert RunnerSettings().cache_max_mb == 0
    monkeypatch.setenv("RUNNER_CACHE_MAX_MB", "-1")
    with pytest.raises(ValueError):
        RunnerSettings()
