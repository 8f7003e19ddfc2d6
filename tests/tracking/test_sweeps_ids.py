"""A new sweep id is read back as text from a command line: the report command a sweep prints
(``recoeval-track-report select.sweep_id=<id>``) finds its sweep whatever hex digits were drawn.
Hydra reads ``726931357e10`` as a float and ``012345678901`` as an int (a lost leading zero)."""

from __future__ import annotations

import uuid

from hydra.core.override_parser.overrides_parser import OverridesParser

from recoeval_tracking.tracking import sweeps


def _as_typed(sweep_id: str):
    return OverridesParser.create().parse_override(f"select.sweep_id={sweep_id}").value()


def test_a_drawn_id_that_reads_as_a_number_is_drawn_again(monkeypatch):
    drawn = iter(
        [
            uuid.UUID("726931357e10" + "0" * 20),  # a float to Hydra
            uuid.UUID("012345678901" + "0" * 20),  # an int to Hydra
            uuid.UUID("0123456789ab" + "0" * 20),
        ]
    )
    assert _as_typed("726931357e10") == 7.26931357e18  # the trap itself
    monkeypatch.setattr(sweeps.uuid, "uuid4", lambda: next(drawn))
    assert sweeps.new_sweep_id() == "0123456789ab"


def test_new_ids_are_text_on_the_command_line():
    ids = [sweeps.new_sweep_id() for _ in range(300)]
    assert all(len(i) == 12 and int(i, 16) >= 0 for i in ids)
    assert all(_as_typed(i) == i for i in ids[:50])
    assert len(set(ids)) == len(ids)
