"""Scale-out of `prefixsim run`: --workers (joblib processes) and --executor dask give exactly the
serial output; mistakes are reported as in a serial run."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = [str(ROOT / "scenarios" / n) for n in ("seed-fork-chapter.yaml", "ttl-expiry.yaml")]


def prefixsim(*args):
    return subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", *args],
                          capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def serial():
    p = prefixsim("run", *FILES, "--format", "json", "--no-write", "--price-date", "2026-11-30")
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.slow
def test_workers_give_the_serial_output(serial):
    p = prefixsim("run", *FILES, "--format", "json", "--no-write", "--price-date", "2026-11-30", "--workers", "2")
    assert p.returncode == 0, p.stderr
    assert p.stdout == serial


@pytest.mark.slow
def test_dask_cluster_gives_the_serial_output(serial):
    distributed = pytest.importorskip("distributed")
    # two worker processes on loopback, as a cluster's are: each loads the scenario files itself
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        p = prefixsim("run", *FILES, "--format", "json", "--no-write", "--price-date", "2026-11-30",
                      "--executor", "dask", "--scheduler", cluster.scheduler_address)
        ran = client.run(lambda dask_worker: dask_worker.state.executed_count)
    assert len(ran) == 2 and sum(ran.values()) >= 2   # the runs went to the worker processes
    assert p.returncode == 0, p.stderr
    assert p.stdout == serial


@pytest.mark.slow
def test_a_bad_file_is_reported_with_workers_as_without(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntimeline: 3\n")
    runs = [prefixsim("run", FILES[0], str(bad), "--no-write", "--format", "json", *w) for w in ([], ["--workers", "2"])]
    assert runs[0].returncode == runs[1].returncode == 2
    assert runs[0].stdout == runs[1].stdout and runs[0].stderr == runs[1].stderr


@pytest.mark.parametrize("args, needle", [(["--executor", "dask"], "needs --scheduler"),
                                          (["--scheduler", "tcp://127.0.0.1:1"], "applies to --executor dask"),
                                          (["--workers", "-3"], "--workers must be")])
@pytest.mark.slow
def test_option_mistakes_exit_2(args, needle):
    p = prefixsim("run", FILES[0], "--no-write", *args)
    assert p.returncode == 2 and needle in p.stderr, p.stderr


def _json(results):
    from prefixsim.report.tables import json_text
    return [json_text(r.to_json()) for r in results]


@pytest.mark.slow
def test_small_jobs_run_serially_without_a_pool(monkeypatch):
    """Runs worth less than a pool's start-up never start one (`--workers 2` was 2x slower than serial)."""
    import joblib

    from prefixsim.api import run_paths
    from prefixsim.scenario import parallel

    monkeypatch.setattr(parallel, "POOL_COST", 3600.0)
    monkeypatch.setattr(joblib, "Parallel", lambda *a, **k: pytest.fail("a pool was started"))
    date = __import__("datetime").date(2026, 11, 30)
    assert _json(run_paths(FILES, date, workers=2)) == _json(run_paths(FILES, date))


@pytest.mark.slow
def test_a_pool_that_pays_takes_slices_of_whole_files_and_gives_the_serial_output(monkeypatch):
    import joblib

    from prefixsim.api import run_paths
    from prefixsim.scenario import parallel

    tasks = []
    real = joblib.Parallel

    def recording(*args, **kwargs):
        pool = real(*args, **kwargs)
        return lambda jobs: pool(tasks.append(j) or j for j in jobs)

    date = __import__("datetime").date(2026, 11, 30)
    want = _json(run_paths(FILES * 2, date))
    monkeypatch.setattr(parallel, "POOL_COST", 0.0)
    monkeypatch.setattr(joblib, "Parallel", recording)
    assert [len(parallel.scenario_runs(f)) for f in FILES] == [2, 2]
    assert _json(run_paths(FILES * 2, date, workers=2)) == want
    # four runs ran here (the very first, then three timed: MIN_TIMED); the other two files went to the pool
    chunks = [args[:3] for _, args, _ in tasks]
    assert chunks == [(FILES[0], 0, 2), (FILES[1], 0, 2)]
    # with two runs timed, the pool starts within the second file: the rest of it is a slice of its own
    tasks.clear()
    monkeypatch.setattr(parallel, "MIN_TIMED", 2)
    assert _json(run_paths(FILES * 2, date, workers=2)) == want
    assert [args[:3] for _, args, _ in tasks] == [(FILES[1], 1, 2), (FILES[0], 0, 2), (FILES[1], 0, 2)]


def test_one_run_timed_does_not_start_a_pool(monkeypatch):
    """A scenario's runs took 0.001-0.75 s in scenarios/: one of them predicted the rest at 35 s, and
    `run scenarios/ --workers 2` started a pool that made it 1.4x slower than serial."""
    from prefixsim.scenario import parallel

    times = iter([0.0, 0.1, 0.1, 0.85, 0.85, 0.9] + [0.9 + k * 0.001 for k in range(100)])
    monkeypatch.setattr(parallel.time, "perf_counter", lambda: next(times))
    monkeypatch.setattr(parallel, "_simulate", lambda path, i, *clock: (path, i))
    monkeypatch.setattr(parallel, "_pool", lambda *a: pytest.fail("a pool was started"))
    tasks = [("a.yaml", 0), ("b.yaml", 0)] + [("c.yaml", i) for i in range(40)]
    assert list(parallel._local(tasks, 2, (None, None, False))) == tasks
