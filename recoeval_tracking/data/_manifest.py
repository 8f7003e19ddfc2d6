"""The manifest of a partitioned dataset checked before it is used
(:func:`recoeval_tracking.data.open_partitioned`): a key missing or of the wrong kind is named
with the manifest's path, instead of a bare ``KeyError`` when the reader first needs it."""

from __future__ import annotations

from typing import Any

from .._validation import InputError

__all__ = ["check_manifest"]

_COUNTS = (
    "n_users",
    "n_items",
    "train_users",
    "test_users",
    "train_interactions",
    "test_interactions",
)
_PART_COUNTS = ("users", "train", "test")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_manifest(manifest: dict[str, Any], where: str, fix: str) -> None:
    """Every key the reader uses is in the manifest with a value of its kind (counts are ints
    >= 0, a part's ``file`` a name), and the parts' users add up to ``n_users``; each failure
    names the manifest and the key."""

    def bad(key: str, what: str) -> InputError:
        return InputError(
            f"The manifest {where} of a partitioned dataset {what} (key {key!r}). {fix}"
        )

    for key in _COUNTS:
        if key not in manifest:
            raise bad(key, f"lacks the count {key}")
        if not _count(manifest[key]):
            raise bad(key, f"holds {manifest[key]!r} where a count (an int >= 0) is expected")
    if not isinstance(manifest.get("fingerprint"), str):
        raise bad("fingerprint", "has no fingerprint (a str)")
    for i, part in enumerate(manifest["parts"]):
        if not isinstance(part, dict) or not isinstance(part.get("file"), str) or not part["file"]:
            raise bad(f"parts[{i}].file", f"lists part {i} without its file name")
        for key in _PART_COUNTS:
            if not _count(part.get(key)):
                got = "no" if key not in part else repr(part[key])
                raise bad(
                    f"parts[{i}].{key}",
                    f"gives {got} {key} count for its part {i} "
                    f"({part['file']}) where an int >= 0 is expected",
                )
    total = sum(int(p["users"]) for p in manifest["parts"])
    if total != manifest["n_users"]:
        raise bad("n_users", f"says {manifest['n_users']} users where its parts hold {total}")
