"""``stepgraph._clock``: checkpoint timestamps written as ``datetime.isoformat`` writes them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from stepgraph._clock import iso_of_micros, utc_now_iso

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@given(st.integers(min_value=0, max_value=253_402_300_799_999_999))  # up to 9999-12-31
def test_the_text_is_isoformats(micros: int) -> None:
    assert iso_of_micros(micros) == (_EPOCH + timedelta(microseconds=micros)).isoformat()


@given(st.integers(min_value=0, max_value=4_102_444_800), st.lists(st.integers(0, 999_999)))
def test_times_within_one_second_share_its_text(second: int, fractions: list[int]) -> None:
    for fraction in [0, *fractions, 0]:
        micros = second * 1_000_000 + fraction
        assert iso_of_micros(micros) == (_EPOCH + timedelta(microseconds=micros)).isoformat()


def test_now_is_between_the_datetimes_before_and_after() -> None:
    before = datetime.now(UTC)
    text = utc_now_iso()
    after = datetime.now(UTC)
    assert before <= datetime.fromisoformat(text) <= after
    assert text.endswith("+00:00")
