"""The standard error's description of a bad value (``recoeval_tracking._validation``)."""

from __future__ import annotations

import pytest

from recoeval_tracking._validation import InputError, describe, param_error


def test_a_long_value_keeps_its_start_and_its_end():
    """A path longer than the message's room keeps its folder's start and its file name with
    the suffix the message is about (cutting its end hid '.csv' behind '...')."""
    path = "/tmp/pytest-of-root/pytest-1000/popen-gw1/test_parquet_pair_round_trip_a0/u.csv"
    shown = describe(path)
    assert shown.startswith("'/tmp/pytest-of-root/") and shown.endswith("/u.csv' (type str)")
    assert "..." in shown and len(shown.removesuffix(" (type str)")) == 80
    assert describe("short.csv") == "'short.csv' (type str)"  # whole when it fits
    with pytest.raises(InputError, match=r"a \.npy file\. Got '/tmp/pytest.*/u\.csv' \(type str"):
        raise param_error("user_factors", "f", "a .npy file", path)
