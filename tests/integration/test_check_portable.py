"""scripts/check-portable.sh reads a binary's dynamic section and symbol versions: the development
build (shared spdlog, fmt, libcrypto; not stripped) must be refused, naming each reason; the
portable build, when it exists beside this build (scripts/build-portable.sh), must pass."""
import os
import subprocess
from pathlib import Path

import pytest

import tvtest

SRC = tvtest.SOURCE_DIR
CHECK = SRC / "scripts" / "check-portable.sh"


def check(binary, **env):
    return subprocess.run(["bash", str(CHECK), str(binary)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)


def test_development_build_is_not_portable():
    p = check(str(tvtest.BIN))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "NOT PORTABLE: needs libspdlog" in p.stderr or "NOT PORTABLE: needs libasan" in p.stderr
    assert "is not stripped" in p.stderr


def test_symbol_version_limit_is_enforced():
    p = check(str(tvtest.BIN), MAX_GLIBC="2.2.5")
    assert "needs GLIBC_2.3" in p.stderr or "needs GLIBC_2.1" in p.stderr or "needs GLIBC_2." in p.stderr
    assert "(at most GLIBC_2.2.5)" in p.stderr


def test_portable_build_passes():
    binary = Path(os.environ.get("TV_PORTABLE_BIN", SRC / "build-portable" / "trainvisor"))
    if not binary.exists():
        pytest.skip(f"{binary} not built (scripts/build-portable.sh)")
    p = check(binary)
    assert p.returncode == 0, p.stderr
    assert "needs:   " in p.stdout
    for lib in p.stdout.split("needs:")[1].splitlines()[0].split():
        assert lib.startswith(("libc.so", "libm.so", "ld-linux", "libstdc++", "libgcc_s", "libdl", "libpthread", "librt"))
