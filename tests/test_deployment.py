"""Deployment (issue 15.5): ``import ctxselect`` and ``select()`` work with a read-only installed
package and no writable HOME, temporary directory or cache directory; a kernel cache warmed at
build time is loaded from a read-only file system.

We run as root, so ``chmod`` blocks nothing: an unwritable HOME is a path under a regular file,
and a read-only package, ``/tmp`` or cache is a read-only bind mount in a private mount namespace
(``unshare -m``; those tests are skipped where it is refused). See docs/deployment.md.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ctxselect

PACKAGE = Path(ctxselect.__file__).resolve().parent
ROOT = PACKAGE.parent
SCRIPT = """
import sys
import ctxselect, ctxselect._config as config
cands = [{"id": f"c{k}", "text": f"Refunds for plan {k} take {k % 7 + 1} days.", "relevance": 0.9 - k / 100}
         for k in range(8)]
print(config.CACHE_DIR, config.CACHE_READ_ONLY)
print(ctxselect.select(cands, {"token_budget": 30}, "how long do refunds take", method=sys.argv[1]).ids)
print(ctxselect.inspect(cands[:3], {"token_budget": 30}).metrics["token_utilization"] > 0)
from ctxselect.kernels import words
kernel = words._scan_words_serial  # the question's terms and the signatures in one scan
print(sum(kernel._cache_hits.values()) if hasattr(kernel, "_cache_hits") else "nojit")
"""


def _unwritable_home(tmp_path: Path) -> dict:
    blocker = tmp_path / "a-file"
    blocker.write_text("HOME, XDG_CACHE_HOME and TMPDIR below a regular file cannot be created")
    env = {k: v for k, v in os.environ.items() if k != "CTXSELECT_CACHE_DIR"}
    env.update(HOME=str(blocker / "home"), XDG_CACHE_HOME=str(blocker / "cache"), TMPDIR=str(blocker / "tmp"),
               PYTHONPATH=str(ROOT))
    return env


def _read_only_mounts_work() -> bool:
    if sys.platform != "linux" or not shutil.which("unshare") or not shutil.which("mount"):
        return False
    probe = Path(__file__).resolve().parent / "data"
    done = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind {probe} {probe} && "
                           f"mount -o remount,ro,bind {probe} {probe} && ! touch {probe}/.probe 2>/dev/null"],
                          capture_output=True, timeout=60)
    return done.returncode == 0


needs_read_only_mounts = pytest.mark.skipif(not _read_only_mounts_work(),
                                            reason="no private mount namespace (unshare -m) here")


def _run_read_only(env: dict, read_only: list, method: str) -> subprocess.CompletedProcess:
    """SCRIPT in a mount namespace where every path of ``read_only`` is a read-only bind mount, from
    a read-only working directory (the package's)."""
    mounts = " && ".join(f"mount --bind {p} {p} && mount -o remount,ro,bind {p} {p}" for p in read_only)
    command = f'{mounts} && cd {PACKAGE} && exec "$0" -c "$1" "$2"'
    return subprocess.run(["unshare", "-m", "sh", "-c", command, sys.executable, SCRIPT, method], env=env,
                          capture_output=True, text=True, timeout=600)


def _files(root: Path) -> dict:
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_no_writable_home_falls_back_to_the_temporary_directory(tmp_path):
    env = _unwritable_home(tmp_path)
    env.update(TMPDIR=str(tmp_path / "tmp"), NUMBA_DISABLE_JIT="1")  # the fallback order only: no compiling
    (tmp_path / "tmp").mkdir()
    done = subprocess.run([sys.executable, "-c", SCRIPT, "greedy"], env=env, capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == f"{tmp_path / 'tmp' / f'ctxselect-numba-{os.getuid()}'} False"
    assert lines[1].startswith("['c0'") and lines[2] == "True"
    assert "cache directory" not in done.stderr


@needs_read_only_mounts
def test_nothing_writable_at_all_imports_and_selects_with_one_warning(tmp_path):
    """Read-only package, /tmp and /var/tmp, no HOME, no TMPDIR: no temporary directory is usable
    (``tempfile.gettempdir()`` raises, which once failed ``import ctxselect``). Kernels run
    uncompiled here to keep the test fast; compiling without a disk cache is
    tests/test_config.py's."""
    env = _unwritable_home(tmp_path)
    env["NUMBA_DISABLE_JIT"] = "1"
    before = _files(PACKAGE)
    done = _run_read_only(env, [PACKAGE, "/tmp", "/var/tmp"], "greedy")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[:3] == ["None False", lines[1], "True"] and lines[1].startswith("['c0'")
    assert done.stderr.count("no writable cache directory") == 1
    assert _files(PACKAGE) == before


@needs_read_only_mounts
def test_a_cache_warmed_at_build_time_is_loaded_from_a_read_only_file_system(tmp_path):
    cache = tmp_path / "cache"
    env = _unwritable_home(tmp_path)
    env["CTXSELECT_CACHE_DIR"] = str(cache)
    # build time: warm the cache (the greedy baseline compiles the signal kernels)
    warm = subprocess.run([sys.executable, "-c", SCRIPT, "greedy"], env=env, capture_output=True, text=True,
                          timeout=600, cwd=str(tmp_path))
    assert warm.returncode == 0, warm.stderr[-2000:]
    assert warm.stdout.splitlines()[0] == f"{cache} False" and warm.stdout.splitlines()[-1] == "0"
    cached, package = _files(cache), _files(PACKAGE)
    assert any(p.suffix == ".nbc" for p in cached)
    # run time: package, cache and /tmp read-only; the optimizer needs kernels the warm-up did not compile
    done = _run_read_only(env, [PACKAGE, cache, "/tmp"], "optimal")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == f"{cache} True" and lines[1].startswith("['c0'") and lines[2] == "True"
    assert int(lines[3]) >= 1  # the signature kernel was loaded, not compiled
    assert "cache directory" not in done.stderr
    assert _files(cache) == cached and _files(PACKAGE) == package
