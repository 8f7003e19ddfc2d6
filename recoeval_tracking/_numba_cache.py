"""Whether numba's on-disk cache holds a compiled function (standard library only)."""

from __future__ import annotations

import os
from typing import Any


def is_cached(dispatcher: Any) -> bool:
    """Whether numba's on-disk cache holds an index for ``dispatcher`` (a ``cache=True``
    function): else its first call compiles it, seconds a terminal should hear about. True when
    that cannot be told (numba's cache layout changed)."""
    index = getattr(
        getattr(getattr(dispatcher, "_cache", None), "_cache_file", None), "_index_path", None
    )
    return index is None or os.path.exists(index)


def engine_cache_is_cold() -> bool:
    """True when numba's on-disk cache holds no index of the engine's kernels (a first run, a
    fresh install or a cleared ``NUMBA_CACHE_DIR``): the first evaluation compiles them. Only
    looks for the index files; imports nothing beyond the standard library, so that the app can
    ask before it imports numpy or Hydra."""
    from pathlib import Path

    from . import engine

    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    # numba writes every cache there when it is set, else beside the sources
    root = Path(cache_dir) if cache_dir else Path(engine.__file__).parent / "__pycache__"
    try:
        return not (root.is_dir() and next(root.rglob("kernels*.nbi"), None) is not None)
    except OSError:
        return True
