"""The single executable's launcher (packaging/launcher.c, packaging/pack.py) on a tiny bundle.

A real pack (the C launcher compiled, the bundle compressed with the zstd command) of a folder whose
`appliance` is a shell script: the first start unpacks it into the cache and runs it, later starts
use the cache, a file deleted from the cache is unpacked again, concurrent first starts share one
folder, and a damaged or cut payload is refused without leaving a folder behind.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_packer():
    spec = importlib.util.spec_from_file_location("appliance_pack", ROOT / "packaging" / "pack.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _can_build() -> bool:
    return bool(
        (shutil.which("cc") or shutil.which("gcc"))
        and shutil.which("zstd")
        and any(Path(p).exists() for p in ("/usr/include/zstd.h", "/usr/local/include/zstd.h"))
    )


pytestmark = pytest.mark.skipif(not _can_build(), reason="needs a C compiler, libzstd-dev and zstd")


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    onedir = tmp_path_factory.mktemp("onedir")
    (onedir / "_internal" / "lib").mkdir(parents=True)
    (onedir / "_internal" / "lib" / "data.txt").write_text("payload of the bundle\n")
    (onedir / "_internal" / "lib" / "big.bin").write_bytes(os.urandom(300_000) * 2)
    os.symlink("lib/data.txt", onedir / "_internal" / "data-link.txt")
    script = onedir / "appliance"
    script.write_text(
        '#!/bin/sh\nhere=$(dirname "$0")\necho "args: $*"\ncat "$here/_internal/data-link.txt"\n'
    )
    script.chmod(0o755)
    out = tmp_path_factory.mktemp("dist") / "appliance"
    _load_packer().pack(onedir, out)
    return out


def _run(binary: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "XDG_CACHE_HOME": str(cache), "HOME": str(cache / "home")}
    return subprocess.run([str(binary), *args], env=env, capture_output=True, text=True, timeout=60)


def _builds(cache: Path) -> list[Path]:
    return sorted((cache / "appliance").iterdir()) if (cache / "appliance").exists() else []


def test_the_first_start_unpacks_the_bundle_into_the_cache_and_runs_it(packed: Path, tmp_path: Path) -> None:
    result = _run(packed, tmp_path, "serve", "--json")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "args: serve --json\npayload of the bundle\n"
    (build,) = _builds(tmp_path)
    assert len(build.name) == 40
    assert (build / "_internal" / "lib" / "big.bin").stat().st_size == 600_000
    assert os.readlink(build / "_internal" / "data-link.txt") == "lib/data.txt"
    assert "600000 _internal/lib/big.bin" in (build / ".files").read_text()


def test_a_later_start_runs_the_unpacked_build_and_a_deleted_file_is_unpacked_again(
    packed: Path, tmp_path: Path
) -> None:
    assert _run(packed, tmp_path).returncode == 0
    (build,) = _builds(tmp_path)
    marker = build / "_internal" / "lib" / "data.txt"
    inode = marker.stat().st_ino
    assert _run(packed, tmp_path).returncode == 0
    assert marker.stat().st_ino == inode  # used as it was
    (build / "_internal" / "lib" / "big.bin").unlink()
    result = _run(packed, tmp_path)
    assert result.returncode == 0 and result.stdout.endswith("payload of the bundle\n")
    assert (build / "_internal" / "lib" / "big.bin").stat().st_size == 600_000
    assert [p.name for p in _builds(tmp_path)] == [build.name]  # the damaged copy was replaced, no leftovers


def test_concurrent_first_starts_share_one_unpacked_folder(packed: Path, tmp_path: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: _run(packed, tmp_path, "x"), range(8)))
    assert all(r.returncode == 0 and r.stdout == "args: x\npayload of the bundle\n" for r in results)
    assert len(_builds(tmp_path)) == 1  # no .tmp- leftovers


def _copy_with(packed: Path, tmp_path: Path, change) -> Path:
    data = bytearray(packed.read_bytes())
    change(data)
    copy = tmp_path / "appliance"
    copy.write_bytes(bytes(data))
    copy.chmod(0o755)
    return copy


def _payload_bounds(data: bytearray) -> tuple[int, int]:
    offset, size = struct.unpack("<QQ", bytes(data[-56:-40]))
    return offset, size


def test_a_damaged_payload_is_refused_and_leaves_no_folder(packed: Path, tmp_path: Path) -> None:
    def flip(data: bytearray) -> None:
        offset, size = _payload_bounds(data)
        data[offset + size // 2] ^= 0xFF

    result = _run(_copy_with(packed, tmp_path, flip), tmp_path / "cache")
    assert result.returncode == 127
    assert "the bundle is damaged" in result.stderr or "the bundle ends early" in result.stderr
    # Only a leftover ".tmp-<build>-<pid>" (the next start removes it), never the build's folder.
    assert all(p.name.startswith(".tmp-") for p in _builds(tmp_path / "cache"))


def test_a_cut_payload_is_refused(packed: Path, tmp_path: Path) -> None:
    def cut(data: bytearray) -> None:
        offset, size = _payload_bounds(data)
        trailer = bytes(data[-64:])
        del data[offset + size - 100 :]
        data += trailer[:16] + struct.pack("<Q", size - 100) + trailer[24:]

    result = _run(_copy_with(packed, tmp_path, cut), tmp_path / "cache")
    assert result.returncode == 127
    assert "the bundle" in result.stderr
    assert result.stdout == ""
