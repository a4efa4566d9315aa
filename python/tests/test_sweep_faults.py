"""Faults: a worker killed mid-sweep, an interrupted sweep resumed, an external scheduler."""
import os
import signal
import subprocess
import threading
import time

import distributed
import pytest

import tacos
from sweep_helpers import (PYTHON, SLOW_SWEEP, SMALL_SWEEP, read_csv, run_sweep_cli,
                           sorted_stable, write_sweep)
from tacos.sweep import load_sweep, run_sweep


def _wait_for_rows(path, count, proc_or_thread, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path) and len(read_csv(path)) >= count:
            return len(read_csv(path))
        alive = (proc_or_thread.poll() is None) if hasattr(proc_or_thread, "poll") \
            else proc_or_thread.is_alive()
        if not alive:
            break
        time.sleep(0.02)
    pytest.fail(f"the sweep did not reach {count} rows")


def _assert_complete(rows, configs):
    ids = [r["config_id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate rows"
    assert set(ids) == {c["config_id"] for c in configs}, "missing configurations"
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows if r["error"]]


def _check_times(rows):
    """Rows computed on any worker equal a synthesis in this process (deterministic)."""
    for r in rows[:2]:
        got = tacos.synthesize(r["config_topology"], r["config_collective"],
                               int(r["config_size_bytes"]), int(r["config_chunks_per_npu"]))
        assert r["collective_time_us"] == repr(got.collective_time_us)


def test_killing_a_worker_mid_sweep_loses_no_configuration(tmp_path):
    sweep = write_sweep(tmp_path, SLOW_SWEEP)
    configs = load_sweep(sweep)
    out = tmp_path / "results.csv"
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0",
                                       scheduler_kwargs={"dashboard": False})
    client = distributed.Client(cluster)
    try:
        pids = client.run(os.getpid)
        assert len(pids) == 2
        outcome = {}
        runner = threading.Thread(target=lambda: outcome.setdefault(
            "result", run_sweep(sweep, out, client=client, progress=False,
                                log=open(os.devnull, "w"))))
        runner.start()
        at_kill = _wait_for_rows(out, 2, runner)
        busy = {w: keys for w, keys in client.processing().items() if keys}
        assert busy, "a worker must be running configurations when it is killed"
        address = sorted(busy)[0]
        victim = pids[address]
        os.kill(victim, signal.SIGKILL)  # the worker process itself; its nanny starts another
        runner.join(timeout=300)
        assert not runner.is_alive()
        assert at_kill < len(configs), "the kill must happen in the middle of the sweep"
        assert outcome["result"] == (len(configs), len(configs), 0)
        rows = read_csv(out)
        _assert_complete(rows, configs)
        assert victim not in client.run(os.getpid).values()  # it really died
    finally:
        client.close()
        cluster.close()
    _check_times(rows)


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def test_ctrl_c_prints_one_line_and_the_rerun_runs_only_the_missing_rows(tmp_path):
    sweep = write_sweep(tmp_path, SLOW_SWEEP)
    configs = load_sweep(sweep)
    out = tmp_path / "results.csv"
    # Its own process group, signalled as a whole: what Ctrl-C in a terminal does, so the
    # LocalCluster's worker processes get the SIGINT too.
    proc = subprocess.Popen([PYTHON, "-m", "tacos.sweep", str(sweep), "--out", str(out),
                             "--workers", "2", "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for_rows(out, 3, proc)
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines == [
        f"tacos.sweep: {len(configs)} configurations, 0 already in {out}, running {len(configs)}",
        f"tacos.sweep: interrupted; finished rows are in {out}, run the same command again to "
        "complete the rest"], stderr
    deadline = time.monotonic() + 30
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _group_alive(proc.pid), "worker processes outlived the sweep"
    first = read_csv(out)
    kept = out.read_text().splitlines()
    assert 3 <= len(first) < len(configs), "interrupt must land mid-sweep"
    done = run_sweep_cli(sweep, "--out", out, "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert (f"{len(configs)} configurations, {len(first)} already in {out}, running "
            f"{len(configs) - len(first)}") in done.stderr
    rows = read_csv(out)
    _assert_complete(rows, configs)
    assert out.read_text().splitlines()[:len(kept)] == kept  # finished rows untouched
    _check_times(rows)


def test_sweep_on_a_hand_started_scheduler_and_two_workers_gives_the_same_csv(tmp_path):
    sweep = write_sweep(tmp_path, SMALL_SWEEP)
    scheduler_file = tmp_path / "scheduler.json"
    env = os.environ.copy()
    started = []
    try:
        started.append(subprocess.Popen(
            ["/usr/bin/dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
             "--dashboard-address", ":0", "--scheduler-file", str(scheduler_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert scheduler_file.exists(), "dask scheduler did not start"
        for _ in range(2):
            started.append(subprocess.Popen(
                ["/usr/bin/dask", "worker", "--scheduler-file", str(scheduler_file),
                 "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        with distributed.Client(scheduler_file=str(scheduler_file), timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
            address = client.scheduler.address
            assert len(client.scheduler_info()["workers"]) == 2
        remote = tmp_path / "remote.csv"
        done = run_sweep_cli(sweep, "--out", remote, "--scheduler", address)
        assert done.returncode == 0, done.stderr
    finally:
        for proc in reversed(started):
            proc.terminate()
        for proc in reversed(started):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    local = tmp_path / "local.csv"
    done = run_sweep_cli(sweep, "--out", local, "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert sorted_stable(read_csv(remote)) == sorted_stable(read_csv(local))
    assert len(read_csv(remote)) == 24


def test_a_sweep_beside_a_cluster_on_port_8787_prints_only_its_own_lines(tmp_path):
    """Dask's default HTTP port held by someone else (a user's cluster, a parallel test) must
    neither move the sweep's output nor fail it: CI once failed on Dask's port warning."""
    import socket

    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        try:
            holder.bind(("0.0.0.0", 8787))
            holder.listen(1)
        except OSError:
            pass  # already held by another process: the case under test all the same
        sweep = write_sweep(tmp_path, SMALL_SWEEP)
        configs = load_sweep(sweep)
        out = tmp_path / "results.csv"
        done = run_sweep_cli(sweep, "--out", out, "--workers", "1")
    finally:
        holder.close()
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[0] == (f"tacos.sweep: {len(configs)} configurations, 0 already in {out}, "
                        f"running {len(configs)}"), done.stderr
    assert not any("already in use" in line or "Warning" in line for line in lines), done.stderr
