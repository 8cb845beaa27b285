"""The message for a file over the size limit shows the two sizes apart: in KiB where they differ at that
rounding, in exact bytes where they do not (256 KiB + 1 byte is not "256 KiB; the limit is 256 KiB")."""

from __future__ import annotations

import pytest

from contract.wire import MAX_SOURCE_BYTES
from core.errors import BadUploadError
from core.submit.uploads import check_declared, check_upload


def test_one_byte_over_the_limit_is_shown_in_bytes() -> None:
    with pytest.raises(BadUploadError) as refused:
        check_upload("big.py", b"#" * (MAX_SOURCE_BYTES + 1))
    assert f"is {MAX_SOURCE_BYTES + 1:,} bytes; the limit is {MAX_SOURCE_BYTES:,} bytes" in str(refused.value)


def test_the_declared_size_of_an_attachment_one_byte_over_is_shown_in_bytes() -> None:
    with pytest.raises(BadUploadError) as refused:
        check_declared("big.cu", MAX_SOURCE_BYTES + 1)
    assert f"is {MAX_SOURCE_BYTES + 1:,} bytes; the limit is {MAX_SOURCE_BYTES:,} bytes" in str(refused.value)


def test_sizes_that_differ_in_kib_stay_in_kib() -> None:
    with pytest.raises(BadUploadError) as refused:
        check_upload("big.py", b"#" * (10 * 1024 * 1024))
    assert "is 10,240 KiB; the limit is 256 KiB" in str(refused.value)
