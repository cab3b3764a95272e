"""appliance/common/sealing.py on real files: what seal_file writes opens only to the same bytes,
with the same key and under the same label; any cut, addition, swap or move is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from appliance.common.sealing import (
    CHUNK,
    MAGIC,
    SALT_BYTES,
    TAG,
    Damaged,
    Sealer,
    WrongSecret,
    new_identity,
    open_file,
    seal_file,
)


@pytest.fixture(scope="module")
def sealer() -> Sealer:
    return Sealer.with_passphrase("sealing tests")


@pytest.mark.parametrize("size", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5])
def test_a_sealed_file_opens_to_the_same_bytes_and_holds_none_of_them(
    sealer, tmp_path: Path, size: int
) -> None:
    data = os.urandom(size)
    (tmp_path / "clear").write_bytes(data)
    stored_size, digest = seal_file(tmp_path / "clear", tmp_path / "sealed", sealer, "engine.db")
    sealed = (tmp_path / "sealed").read_bytes()
    assert stored_size == len(sealed) and (size < 16 or data[:16] not in sealed)
    again = Sealer.open(sealer.header, passphrase=lambda: "sealing tests")
    assert open_file(tmp_path / "sealed", tmp_path / "opened", again, "engine.db") == (stored_size, digest)
    assert (tmp_path / "opened").read_bytes() == data
    assert (tmp_path / "opened").stat().st_mode & 0o777 == 0o600


def _tampered(sealed: bytes) -> dict[str, bytes]:
    head = len(MAGIC) + SALT_BYTES
    stored = CHUNK + TAG
    first, second = sealed[head : head + stored], sealed[head + stored : head + 2 * stored]
    return {
        "cut at a chunk boundary": sealed[: head + 2 * stored],
        "last byte cut": sealed[:-1],
        "a byte added": sealed + b"\x00",
        "chunks swapped": sealed[:head] + second + first + sealed[head + 2 * stored :],
        "a bit flipped": sealed[:head] + bytes([sealed[head] ^ 1]) + sealed[head + 1 :],
        "not sealed at all": b"SQLite format 3\x00" + sealed[16:],
    }


def test_a_cut_extended_reordered_or_moved_file_does_not_open_and_leaves_nothing(
    sealer, tmp_path: Path
) -> None:
    (tmp_path / "clear").write_bytes(os.urandom(3 * CHUNK + 7))
    seal_file(tmp_path / "clear", tmp_path / "sealed", sealer, "dispatch.db")
    sealed = (tmp_path / "sealed").read_bytes()
    for name, altered in _tampered(sealed).items():
        (tmp_path / name).write_bytes(altered)
        with pytest.raises(Damaged):
            open_file(tmp_path / name, tmp_path / f"{name}.out", sealer, "dispatch.db")
        assert not (tmp_path / f"{name}.out").exists(), name
    with pytest.raises(Damaged):  # the same file under another path (label)
        open_file(tmp_path / "sealed", tmp_path / "moved.out", sealer, "engine.db")


def test_only_the_passphrase_or_the_identity_it_was_sealed_for_opens_the_key(sealer) -> None:
    with pytest.raises(WrongSecret):
        Sealer.open(sealer.header, passphrase=lambda: "not it")
    with pytest.raises(WrongSecret):  # the header's parameters are authenticated with the key
        Sealer.open({**sealer.header, "n": 2**14}, passphrase=lambda: "sealing tests")
    identity, recipient = new_identity()
    sealed_to = Sealer.for_recipients([recipient])
    assert "wrappedKey" in sealed_to.header and identity not in str(sealed_to.header)
    with pytest.raises(WrongSecret):
        Sealer.open(sealed_to.header, identities=[new_identity()[0]])
    opened = Sealer.open(sealed_to.header, identities=[identity])
    assert opened.mac({"a": 1}) == sealed_to.mac({"a": 1}) != sealer.mac({"a": 1})
