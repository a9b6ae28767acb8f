"""Scale-out of `prefixsim run`: --workers (joblib processes) and --executor dask give exactly the
serial output; mistakes are reported as in a serial run."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = [str(ROOT / "scenarios" / n) for n in ("seed-fork-chapter.yaml", "ttl-expiry.yaml")]


def prefixsim(*args):
    return subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", *args],
                          capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def serial():
    p = prefixsim("run", *FILES, "--format", "json", "--no-write", "--price-date", "2026-11-30")
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_workers_give_the_serial_output(serial):
    p = prefixsim("run", *FILES, "--format", "json", "--no-write", "--price-date", "2026-11-30", "--workers", "2")
    assert p.returncode == 0, p.stderr
    assert p.stdout == serial


def test_dask_cluster_gives_the_serial_output(serial):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        p = prefixsim("run", *FILES, "--format", "json", "--no-write", "--price-date", "2026-11-30",
                      "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert p.returncode == 0, p.stderr
    assert p.stdout == serial


def test_a_bad_file_is_reported_with_workers_as_without(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntimeline: 3\n")
    runs = [prefixsim("run", FILES[0], str(bad), "--no-write", "--format", "json", *w) for w in ([], ["--workers", "2"])]
    assert runs[0].returncode == runs[1].returncode == 2
    assert runs[0].stdout == runs[1].stdout and runs[0].stderr == runs[1].stderr


@pytest.mark.parametrize("args, needle", [(["--executor", "dask"], "needs --scheduler"),
                                          (["--scheduler", "tcp://127.0.0.1:1"], "applies to --executor dask"),
                                          (["--workers", "-3"], "--workers must be")])
def test_option_mistakes_exit_2(args, needle):
    p = prefixsim("run", FILES[0], "--no-write", *args)
    assert p.returncode == 2 and needle in p.stderr, p.stderr
