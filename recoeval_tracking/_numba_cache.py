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
