"""Design-space sweeps on Dask: ``python3 -m tacos.sweep SWEEP.yaml --out results.csv``.

The YAML file lists values; the sweep runs their product, one task per configuration::

    topologies:            # generator specs, files, or {spec, bandwidth, latency, switch_model}
      - torus2d:4x4
      - {spec: mesh2d:4x4, bandwidth: [50, 25]}
    collectives: [all-gather, all-reduce]
    sizes: [1MiB, 64MiB, 1GiB]
    chunks_per_npu: [1, auto]
    algorithms: [tacos, ring, direct, rhd, dbt, hierarchical]
    link_models: [tacos]   # optional, default [tacos]
    seed: 1                # optional
    trials: 1              # optional
    auto_budget: 10        # optional: seconds of K search per ``auto`` configuration

A workload sweep varies the fabric under a training step instead (docs/workload.md): with
``workload`` given, each configuration is a topology, algorithm and K for the workload's
collectives, and the row has the step tacos predicts for the ASTRA-sim bundle::

    workload: {et: stg-gpt-dp2-tp4/gpt, comm_groups: stg-gpt-dp2-tp4/gpt.json}
    topologies: [switch:8, fc:8, {spec: switch:8, bandwidth: 100}]
    algorithms: [tacos, ring]   # optional, default [tacos]
    chunks_per_npu: [16]        # optional, default [16] (as tacos.workload)

Tasks run on a Dask ``LocalCluster`` (worker processes on this machine) or, with
``--scheduler ADDRESS``, on the cluster behind that scheduler. Each finished task appends one
row to the CSV at once: the configuration (``config_*`` columns, as given), the link bandwidths
and latencies it was simulated with (``link_bandwidth_gibps``, ``link_latency_us``: defaults
resolved), every key of ``tacos synthesize --json``, ``status`` (``ok``; ``error``: tacos refused the configuration, the
message is in ``error``; ``failed``: the task itself died, e.g. its worker was lost too often) and
``error``. ``tacos`` runs with its portfolio (``portfolio_winner`` names the schedule kept,
``greedy_time_us`` is tacos's own schedule's time before the baselines, empty where the
fastest baseline stopped its only K or, within 0.5% of the lower bound, left it unrun). Re-running with the same ``--out`` skips configurations that have an ``ok`` or
``error`` row and retries ``failed`` ones, so an interrupted sweep resumes where it stopped.
"""

import argparse
import csv
import hashlib
import itertools
import logging
import os
import signal
import sys
import time

import yaml

from . import _tacos

#: The configuration columns (as the sweep file gives them; blank bandwidth or latency: the
#: generator's own), the link values that configuration resolved to, then the keys of
#: ``tacos synthesize --json`` (REPORT_COLUMNS), then the outcome. Bandwidth columns name their
#: unit: ``gibps`` is GB/s of 2^30 B/s (inputs: --bandwidth, topology files), ``gbps`` GB/s of
#: 10^9 B/s (the reported algbw/busbw, as nccl-tests).
CONFIG_COLUMNS = [
    "config_id",
    "config_topology",
    "config_bandwidth_gibps",
    "config_latency",
    "config_switch_model",
    "config_collective",
    "config_size_bytes",
    "config_chunks_per_npu",
    "config_algorithm",
    "config_link_model",
    "config_seed",
    "config_trials",
    "config_auto_budget",
]
#: The keys of ``tacos synthesize --json`` in its order, from the one list the command prints
#: them by; ``out``, ``astra_sim``, ``chakra_replay`` and ``msccl_replay`` need --out, which a
#: sweep never gives.
REPORT_COLUMNS = [key for key in _tacos.synthesize_keys()
                  if key not in ("out", "astra_sim", "chakra_replay", "msccl_replay")]
#: What the topology of the row was simulated with, defaults resolved: its distinct link
#: bandwidths (largest first) and latencies (smallest first), comma-separated when several.
#: The resolved chunk count K of ``auto`` is ``chunks_per_npu``.
LINK_COLUMNS = ["link_bandwidth_gibps", "link_latency_us"]
OUTCOME_COLUMNS = ["status", "error"]
COLUMNS = CONFIG_COLUMNS + LINK_COLUMNS + REPORT_COLUMNS + OUTCOME_COLUMNS
#: A workload sweep's rows: its configuration, the resolved links, what ``tacos workload --json``
#: says of the step (the distinct collectives' count and, over the ranks, the largest predicted
#: step, compute and exposed communication), then the outcome.
WORKLOAD_CONFIG_COLUMNS = [
    "config_id",
    "config_workload",
    "config_comm_groups",
    "config_topology",
    "config_bandwidth_gibps",
    "config_latency",
    "config_switch_model",
    "config_algorithm",
    "config_chunks_per_npu",
    "config_seed",
]
WORKLOAD_REPORT_COLUMNS = ["ranks", "collectives", "predicted_step_us", "predicted_compute_us",
                           "predicted_exposed_communication_us", "serial_communication_us"]
WORKLOAD_COLUMNS = (WORKLOAD_CONFIG_COLUMNS + LINK_COLUMNS + WORKLOAD_REPORT_COLUMNS +
                    OUTCOME_COLUMNS)

_LIST_KEYS = ("topologies", "collectives", "sizes", "chunks_per_npu", "algorithms", "link_models")
_SCALAR_KEYS = {"seed", "trials", "auto_budget", "name", "description", "workload"}
#: Keys of a collective sweep that a workload sweep (its collectives come from the workload)
#: does not take.
_COLLECTIVE_ONLY_KEYS = ("collectives", "sizes", "link_models", "trials", "auto_budget")
#: Seconds an ``auto`` configuration's K search may take before no larger K is started
#: (``--auto-budget``): mesh2d:4x4 All-Reduce of 1 MiB under the astra link model would
#: otherwise climb to K = 128-512 for about a minute. The row's ``auto_stopped`` says when it
#: cut the search short.
DEFAULT_AUTO_BUDGET = 10
_TOPOLOGY_KEYS = {"spec", "bandwidth", "latency", "switch_model"}


class SweepError(Exception):
    """A bad sweep file or CSV; the message says which and what was expected."""


def _text(value):
    """A YAML scalar or list -> the command line's text ("50", "50,25", "1MiB")."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


def load_sweep(path):
    """Reads a sweep file -> list of configurations (dicts of ``config_*`` values), in a fixed
    order. Raises SweepError naming the file and the offending key."""
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        raise SweepError(f"{path}: cannot read ({e.strerror})") from None
    except yaml.YAMLError as e:
        raise SweepError(f"{path}: not valid YAML ({e})") from None
    if not isinstance(doc, dict):
        raise SweepError(f"{path}: expected a mapping with topologies, collectives, sizes, ...")
    unknown = set(doc) - set(_LIST_KEYS) - _SCALAR_KEYS
    if unknown:
        raise SweepError(f"{path}: unknown key(s) {', '.join(sorted(unknown))} (expected "
                         f"{', '.join(list(_LIST_KEYS) + sorted(_SCALAR_KEYS))})")
    workload = doc.get("workload")
    if workload is not None:
        extra = [k for k in _COLLECTIVE_ONLY_KEYS if k in doc]
        if extra:
            raise SweepError(f"{path}: {', '.join(extra)}: not for a workload sweep (its "
                             "collectives and sizes come from the workload)")
    lists = {}
    defaults = {"chunks_per_npu": [16 if workload is not None else 1], "algorithms": ["tacos"],
                "link_models": ["tacos"], "collectives": ["all-reduce"],
                "sizes": [1] if workload is not None else None}
    for key in _LIST_KEYS:
        value = doc.get(key, defaults.get(key))
        if value is None:
            raise SweepError(f"{path}: '{key}' is required (a list)")
        if not isinstance(value, list):
            value = [value]
        if not value:
            raise SweepError(f"{path}: '{key}' is empty")
        lists[key] = value
    topologies = []
    for i, entry in enumerate(lists["topologies"]):
        if isinstance(entry, str):
            entry = {"spec": entry}
        if not isinstance(entry, dict) or "spec" not in entry:
            raise SweepError(f"{path}: topologies[{i}]: expected a spec string or a mapping "
                             "with 'spec' (and optional bandwidth, latency, switch_model)")
        extra = set(entry) - _TOPOLOGY_KEYS
        if extra:
            raise SweepError(f"{path}: topologies[{i}]: unknown key(s) {', '.join(sorted(extra))}")
        spec = str(entry["spec"])
        if spec.endswith((".yaml", ".yml")) and not os.path.isabs(spec):
            spec = os.path.join(os.path.dirname(os.path.abspath(path)), spec)
        topologies.append((spec, _text(entry.get("bandwidth")), _text(entry.get("latency")),
                           str(entry.get("switch_model", "device"))))
    if workload is not None:
        return _workload_configs(path, workload, topologies, lists, doc.get("seed", 1))
    seed = doc.get("seed", 1)
    trials = doc.get("trials", 1)
    if not isinstance(seed, int) or seed < 0:
        raise SweepError(f"{path}: seed: expected a whole number >= 0, got {seed!r}")
    if not isinstance(trials, int) or trials < 1:
        raise SweepError(f"{path}: trials: expected a whole number >= 1, got {trials!r}")
    auto_budget = doc.get("auto_budget", DEFAULT_AUTO_BUDGET)
    if isinstance(auto_budget, str):  # YAML reads 1e-3 (no dot) as text
        try:
            auto_budget = float(auto_budget)
        except ValueError:
            pass
    if isinstance(auto_budget, bool) or not isinstance(auto_budget, (int, float)) \
            or not 0 <= auto_budget < float("inf"):
        raise SweepError(f"{path}: auto_budget: expected seconds as a number >= 0 (0: no "
                         f"limit), got {auto_budget!r}")
    sizes = []
    for i, size in enumerate(lists["sizes"]):
        try:
            sizes.append(_tacos.parse_size(_text(size), f"sizes[{i}]"))
        except _tacos.Error as e:
            raise SweepError(f"{path}: {e}") from None
    configs = []
    for (spec, bw, lat, sm), coll, size, k, alg, lm in itertools.product(
            topologies, lists["collectives"], sizes, lists["chunks_per_npu"],
            lists["algorithms"], lists["link_models"]):
        config = {
            "config_topology": spec,
            "config_bandwidth_gibps": bw,
            "config_latency": lat,
            "config_switch_model": sm,
            "config_collective": str(coll),
            "config_size_bytes": str(size),
            "config_chunks_per_npu": _text(k),
            "config_algorithm": str(alg),
            "config_link_model": str(lm),
            "config_seed": str(seed),
            "config_trials": str(trials),
            "config_auto_budget": _text(auto_budget),
        }
        config["config_id"] = config_id(config)
        configs.append(config)
    ids = [c["config_id"] for c in configs]
    if len(set(ids)) != len(ids):
        raise SweepError(f"{path}: some configurations are listed twice")
    return configs


def _workload_configs(path, workload, topologies, lists, seed):
    """A workload sweep's configurations: topologies x algorithms x chunks_per_npu."""
    if not isinstance(workload, dict) or "et" not in workload:
        raise SweepError(f"{path}: workload: expected a mapping with 'et' (the workload's "
                         "PREFIX of PREFIX.RANK.et) and optional 'comm_groups'")
    extra = set(workload) - {"et", "comm_groups"}
    if extra:
        raise SweepError(f"{path}: workload: unknown key(s) {', '.join(sorted(extra))} "
                         "(expected et, comm_groups)")
    if not isinstance(seed, int) or seed < 0:
        raise SweepError(f"{path}: seed: expected a whole number >= 0, got {seed!r}")

    def beside_sweep(value):
        value = str(value)
        return value if os.path.isabs(value) else os.path.join(
            os.path.dirname(os.path.abspath(path)), value)

    et = beside_sweep(workload["et"])
    groups = beside_sweep(workload["comm_groups"]) if workload.get("comm_groups") else ""
    configs = []
    for (spec, bw, lat, sm), alg, k in itertools.product(topologies, lists["algorithms"],
                                                          lists["chunks_per_npu"]):
        config = {
            "config_workload": et,
            "config_comm_groups": groups,
            "config_topology": spec,
            "config_bandwidth_gibps": bw,
            "config_latency": lat,
            "config_switch_model": sm,
            "config_algorithm": str(alg),
            "config_chunks_per_npu": _text(k),
            "config_seed": str(seed),
        }
        config["config_id"] = config_id(config)
        configs.append(config)
    if len({c["config_id"] for c in configs}) != len(configs):
        raise SweepError(f"{path}: some configurations are listed twice")
    return configs


def columns_of(configs):
    """The CSV columns of a sweep's rows: WORKLOAD_COLUMNS for a workload sweep, else COLUMNS."""
    return WORKLOAD_COLUMNS if configs and "config_workload" in configs[0] else COLUMNS


def config_id(config):
    """A stable id of a configuration: the same values give the same id in every run."""
    keys = WORKLOAD_CONFIG_COLUMNS if "config_workload" in config else CONFIG_COLUMNS
    text = "|".join(f"{k}={config[k]}" for k in keys if k != "config_id")
    return hashlib.sha1(text.encode()).hexdigest()[:16]


_topology_cache = {}


def run_configuration(config):
    """Runs one configuration (on a Dask worker) -> one CSV row (dict). tacos's refusals become
    ``status=error`` rows; anything else propagates, so Dask can retry the task elsewhere."""
    import tacos

    row = dict(config)
    key = (config["config_topology"], config["config_bandwidth_gibps"],
           config["config_latency"], config["config_switch_model"])
    try:
        topology = _topology_cache.get(key)
        if topology is None:
            spec, bw, lat, sm = key
            if spec.endswith((".yaml", ".yml")):
                topology = tacos.Topology.from_file(spec, switch_model=sm)
            else:
                topology = tacos.Topology.from_spec(spec, bw or None, lat or None, sm)
            _topology_cache[key] = topology
        row["link_bandwidth_gibps"] = _text(list(topology.link_bandwidths_gibps))
        row["link_latency_us"] = _text(list(topology.link_latencies_us))
        if "config_workload" in config:
            row.update(_workload_row(tacos, topology, config))
            return row
        result = tacos.synthesize(
            topology,
            collective=config["config_collective"],
            size=int(config["config_size_bytes"]),
            chunks_per_npu=config["config_chunks_per_npu"],
            algorithm=config["config_algorithm"],
            seed=int(config["config_seed"]),
            trials=int(config["config_trials"]),
            link_model=config["config_link_model"],
            auto_budget=float(config["config_auto_budget"]),
        )
        row.update(result.report)
        row["status"] = "ok"
        row["error"] = ""
    except tacos.Error as e:
        row["status"] = "error"
        row["error"] = str(e)
    return row


def _workload_row(tacos, topology, config):
    """The report columns and outcome of one workload configuration."""
    report = tacos.workload(topology, config["config_workload"],
                            comm_groups=config["config_comm_groups"] or None,
                            algorithm=config["config_algorithm"],
                            chunks_per_npu=config["config_chunks_per_npu"],
                            seed=int(config["config_seed"]))
    ranks = report["predicted_ranks"]
    return {
        "ranks": report["ranks"],
        "collectives": len(report["collectives"]),
        "predicted_step_us": report["predicted_step_us"],
        "predicted_compute_us": max(r["compute_us"] for r in ranks),
        "predicted_exposed_communication_us": max(r["exposed_communication_us"] for r in ranks),
        "serial_communication_us": max(report["serial_communication_us"]),
        "status": "ok",
        "error": "",
    }


def read_rows(path, columns=None):
    """The rows of an existing results CSV (a torn last line, from a killed run, is dropped from
    the file). Raises SweepError if its header is not this version's."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    with open(path, "rb+") as f:
        data = f.read()
        if not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            f.truncate(cut)
            data = data[:cut]
    text = data.decode()
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames != (columns or COLUMNS):
        raise SweepError(f"{path}: not a tacos sweep CSV of this version (its header differs); "
                         "choose another --out")
    return list(reader)


def _csv_value(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"  # as in --json
    return value


class _CsvSink:
    """Appends rows and flushes each one, so a killed sweep keeps every finished row."""

    def __init__(self, path, keep_rows, columns):
        self.columns = columns
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        if keep_rows is not None:  # rewrite without the rows to be retried (atomically)
            tmp = path + ".tmp"
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
                w.writeheader()
                w.writerows(keep_rows)
            os.replace(tmp, path)
            new = False
        self.file = open(path, "a", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=columns, lineterminator="\n",
                                     extrasaction="ignore")
        if new:
            self.writer.writeheader()
            self.file.flush()

    def write(self, row):
        self.writer.writerow({k: _csv_value(row.get(k)) for k in self.columns})
        self.file.flush()

    def close(self):
        self.file.close()


class _Progress:
    """tqdm when installed (Debian python3-tqdm), else a plain counter on stderr."""

    def __init__(self, total, done, enabled):
        self.bar = None
        self.total, self.count, self.enabled = total, done, enabled
        if not enabled:
            return
        try:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="config", file=sys.stderr,
                            dynamic_ncols=True)
        except ImportError:
            pass

    def update(self, failed):
        self.count += 1
        if self.bar is not None:
            self.bar.update(1)
            if failed:
                self.bar.set_postfix_str(f"{failed} error(s)")
        elif self.enabled:
            print(f"\r{self.count}/{self.total} configurations", end="", file=sys.stderr)

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            print(file=sys.stderr)


def _client(scheduler, workers):
    from distributed import Client, LocalCluster

    if scheduler:
        return Client(scheduler, timeout="30s"), None
    from ._sweep_worker import IgnoreCtrlC

    # The workers ignore Ctrl-C (tacos/_sweep_worker.py). While they start, this process ignores
    # it too: an ignored signal stays ignored in the processes started meanwhile.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # Workers' warnings (an event loop unresponsive for seconds on a busy machine) are not
        # the sweep's news: the sweep reports its own errors per row.
        # The scheduler starts its HTTP server (health, metrics) even without a dashboard, on
        # port 8787 unless told otherwise; a free port keeps two sweeps (or a sweep beside a
        # user's own cluster) from colliding and Dask from warning about it.
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.ERROR,
                               scheduler_kwargs={"dashboard": False})
        client = Client(cluster)
        client.register_worker_plugin(IgnoreCtrlC())  # workers restarted later, too
    finally:
        signal.signal(signal.SIGINT, previous)
    return client, cluster


def _quiet_shutdown():
    """After Ctrl-C: a second one does not break the shutdown, and Dask's warnings about the
    tasks and workers being stopped stay off the screen (the sweep prints one line)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


def run_sweep(sweep_path, out, scheduler=None, workers=None, progress=True, client=None,
              log=sys.stderr):
    """Runs the sweep, streaming rows to ``out``. Returns (configurations, run now, errors).
    ``client``: an existing distributed.Client to use (else one is made and closed here)."""
    from distributed import as_completed

    configs = load_sweep(sweep_path)
    columns = columns_of(configs)
    existing = read_rows(out, columns)
    done = {r["config_id"] for r in existing if r["status"] in ("ok", "error")}
    retry = [r for r in existing if r["status"] not in ("ok", "error")]
    todo = [c for c in configs if c["config_id"] not in done]
    print(f"tacos.sweep: {len(configs)} configurations, {len(configs) - len(todo)} already in "
          f"{out}, running {len(todo)}", file=log)
    sink = _CsvSink(out, [r for r in existing if r["status"] in ("ok", "error")]
                    if retry else None, columns)
    errors = 0
    if not todo:
        sink.close()
        return len(configs), 0, 0
    own = client is None
    cluster = None
    if own:
        client, cluster = _client(scheduler, workers or os.cpu_count() or 1)
    bar = _Progress(len(configs), len(configs) - len(todo), progress)
    try:
        # Keys are the configuration ids, so a resubmitted configuration is the same task.
        futures = [client.submit(run_configuration, c, key=f"tacos-{c['config_id']}", pure=False)
                   for c in todo]
        by_key = {f.key: c for f, c in zip(futures, todo)}
        for future in as_completed(futures):
            try:
                row = future.result()
            except Exception as e:  # the task itself failed (e.g. its worker was lost repeatedly)
                row = dict(by_key[future.key])
                row["status"] = "failed"
                row["error"] = f"{type(e).__name__}: {e}"
            if row["status"] != "ok":
                errors += 1
            sink.write(row)
            bar.update(errors)
            future.release()
    except KeyboardInterrupt:
        _quiet_shutdown()
        raise
    finally:
        bar.close()
        sink.close()
        if own:
            client.close()
            if cluster is not None:
                cluster.close()
    return len(configs), len(todo), errors


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m tacos.sweep",
        description="Run a tacos design-space sweep (the product of a YAML file's lists) on Dask "
                    "and stream one CSV row per configuration.")
    parser.add_argument("sweep", help="sweep YAML file (topologies, collectives, sizes, "
                                      "chunks_per_npu, algorithms, link_models, seed, trials)")
    parser.add_argument("--out", required=True,
                        help="results CSV; rows already in it are kept and not run again")
    parser.add_argument("--scheduler", help="Dask scheduler address (tcp://HOST:8786, as printed "
                                            "by `dask scheduler`; start workers with `dask "
                                            "worker ADDRESS`); default: a LocalCluster on this "
                                            "machine")
    parser.add_argument("--workers", type=int, default=None,
                        help="LocalCluster worker processes (default: one per core)")
    parser.add_argument("--plot", metavar="DIR",
                        help="after the sweep, draw time and busbw vs size and heat maps of "
                             "bound ratios into DIR (PNG and SVG; a line per algorithm and "
                             "system, a picture per link model)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error("--workers: must be at least 1")
    started = time.monotonic()
    try:
        total, ran, errors = run_sweep(args.sweep, args.out, args.scheduler, args.workers,
                                       progress=not args.no_progress)
    except SweepError as e:
        print(f"tacos.sweep: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"tacos.sweep: interrupted; finished rows are in {args.out}, run the same "
              "command again to complete the rest", file=sys.stderr)
        return 130
    print(f"tacos.sweep: {ran} run in {time.monotonic() - started:.1f} s, {errors} with errors; "
          f"{total} rows in {args.out}", file=sys.stderr)
    if args.plot:
        from . import sweep_plot

        plot = (sweep_plot.plot_workload_results if _is_workload_csv(args.out)
                else sweep_plot.plot_results)
        for path in plot(args.out, args.plot):
            print(f"tacos.sweep: wrote {path}", file=sys.stderr)
    return 0


def _is_workload_csv(path):
    with open(path) as f:
        return f.readline().rstrip("\n").split(",") == WORKLOAD_COLUMNS


if __name__ == "__main__":
    sys.exit(main())
