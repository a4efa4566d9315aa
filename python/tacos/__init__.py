"""tacos: topology-aware collective algorithms (TACOS method) from Python.

The functions here call the same C++ code as the ``tacos`` command: ``synthesize``, ``compare``,
``bound``, ``simulate`` and ``verify`` return the objects ``tacos SUBCOMMAND --json`` prints, key
for key. Units are the command line's: sizes in bytes (ints, or strings such as ``"64MiB"``),
bandwidth in GB/s (2^30 B/s), latency in microseconds (numbers) or strings with ``ns``, ``us``,
``ms``; times come back in microseconds.

Every call releases the GIL while C++ runs, so Python threads synthesize in parallel. Bad input
raises :class:`tacos.Error` (a ``ValueError``) whose message starts with the Python parameter's
name (``size: expected ..., got -5``); the defaults are the command line's (``all-gather``,
``64MiB``, K = 1, link model ``tacos``).

Sweeps over many configurations on Dask: ``python3 -m tacos.sweep SWEEP.yaml --out results.csv``
(see :mod:`tacos.sweep`).
"""

import os as _os
import re as _re

import numpy as _np

from . import _tacos

__all__ = [
    "Error",
    "Topology",
    "Result",
    "synthesize",
    "compare",
    "bound",
    "workload",
    "simulate",
    "verify",
    "ALGORITHMS",
    "COLLECTIVES",
    "__version__",
]

__version__ = _tacos.version

#: ``tacos.Error`` is raised for every bad input or impossible request; a ``ValueError``.
Error = _tacos.Error
Error.__module__ = "tacos"  # tracebacks say tacos.Error, the name users catch

#: The algorithm names, from the library's one registry: "tacos" first, then the baselines.
ALGORITHMS = tuple(name for name, _help, _collectives in _tacos.algorithms())
COLLECTIVES = (
    "all-gather",
    "reduce-scatter",
    "all-reduce",
    "broadcast",
    "reduce",
    "gather",
    "scatter",
    "all-to-all",
)

#: dtype of :attr:`Result.transfers`: one row per message over one link.
TRANSFER_DTYPE = _np.dtype(
    [
        ("src", _np.int32),
        ("dst", _np.int32),
        ("start_us", _np.float64),
        ("end_us", _np.float64),
        ("chunks", object),  # tuple of chunk ids the message carries
        ("reduce", _np.bool_),
    ]
)


# The command line's flags and the Python parameters they are (messages from C++ name flags).
_PARAMETER_OF_FLAG = {
    "--topology": "topology",
    "--bandwidth": "bandwidth",
    "--latency": "latency",
    "--switch-model": "switch_model",
    "--collective": "collective",
    "--size": "size",
    "--chunks-per-npu": "chunks_per_npu",
    "--algorithm": "algorithm",
    "--algorithms": "algorithms",
    "--seed": "seed",
    "--trials": "trials",
    "--link-model": "link_model",
    "--root": "root",
    "--npus": "npus",
    "--time-only": "time_only",
    "--all-reduce-mode": "all_reduce_mode",
    "--threads": "threads",
    "--portfolio": "portfolio",
    "--auto-budget": "auto_budget",
    "--out": "dir",
    "--format": "formats",
}
_FLAG = _re.compile(r"--[a-z][a-z-]*[a-z]")


class _PythonNames:
    """Re-raises a tacos.Error from C++ with the Python parameters' names in place of the
    command line's flags ("--size: ..." -> "size: ..."), so the message names what the caller
    wrote. ``renamed``: flags whose parameter has another name in this call (``spec``)."""

    def __init__(self, **renamed):
        self.renamed = {"--" + flag.replace("_", "-"): name for flag, name in renamed.items()}

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None or not issubclass(kind, Error):
            return False
        names = {**_PARAMETER_OF_FLAG, **self.renamed}
        text = _FLAG.sub(lambda m: names.get(m.group(0), m.group(0)), str(error))
        raise Error(text) from None


def _whole_number(name, value, minimum):
    """An int (not a bool) >= minimum, else tacos.Error naming the parameter and the value."""
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)) or value < minimum:
        raise Error(f"{name}: expected a whole number >= {minimum}, got {value!r}")
    return int(value)


def _text(name, value, expected):
    """A string parameter; anything else (None, a list, ...) is a tacos.Error naming it."""
    if not isinstance(value, str):
        raise Error(f"{name}: expected {expected}, got {value!r}")
    return value


def _size_text(size):
    """An int (bytes) or a string with a unit -> the command line's --size text."""
    expected = "a positive number of bytes as an int or a string like '64MiB'"
    if isinstance(size, bool) or not isinstance(size, (int, _np.integer, str)):
        raise Error(f"size: expected {expected}, got {size!r}")
    if isinstance(size, str):
        return size
    if size <= 0:
        raise Error(f"size: expected {expected}, got {size!r}")
    return str(int(size))


def _chunks_text(chunks_per_npu):
    if isinstance(chunks_per_npu, str):
        return chunks_per_npu
    if isinstance(chunks_per_npu, (int, _np.integer)) and not isinstance(chunks_per_npu, bool) \
            and chunks_per_npu >= 1:
        return str(int(chunks_per_npu))
    raise Error("chunks_per_npu: expected a whole number >= 1 or 'auto', "
                f"got {chunks_per_npu!r}")


def _list_text(name, value):
    """None -> "" (the default), a number or a list of numbers -> "50" / "50,25", text as is.
    Bare numbers mean GB/s for bandwidth and microseconds for latency, as on the command line."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and value and not any(v is None for v in value):
        return ",".join(_list_text(name, v) for v in value)
    if isinstance(value, (int, float, _np.integer, _np.floating)) and not isinstance(value, bool):
        text = repr(float(value))
        return text[:-2] if text.endswith(".0") else text
    raise Error(f"{name}: expected a number, a string or a list of them, got {value!r}")


def _npus_text(npus):
    if npus is None:
        return None
    if isinstance(npus, str):
        return npus
    if isinstance(npus, (list, tuple, range, _np.ndarray)) and all(
            isinstance(n, (int, _np.integer)) and not isinstance(n, bool) for n in npus):
        return ",".join(str(int(n)) for n in npus)
    raise Error(f"npus: expected NPU ids as a list of ints or a string like '0-7,16-23', "
                f"got {npus!r}")


def _root(root):
    return None if root is None else _whole_number("root", root, 0)


class Topology:
    """A topology: a generator spec (``"torus2d:8x8"``, ``"dgx-a100:2"``, ...) or a YAML file
    (tacos format or ASTRA-sim network config), loaded once and reused by every call.

    Make one with :meth:`from_spec` or :meth:`from_file`.
    """

    def __init__(self, native, bandwidth, latency, switch_model):
        self._native = native
        self._args = (native.spec, bandwidth, latency, switch_model)

    @classmethod
    def from_spec(cls, spec, bandwidth=None, latency=None, switch_model="device"):
        """Builds a generator topology, as ``tacos --topology SPEC --bandwidth B --latency L``.

        ``bandwidth``: GB/s (2^30 B/s), one number or a list per axis/dimension; default 50
        (dgx kinds: their datasheet numbers). ``latency``: microseconds as a number, or a string
        with ns/us/ms, or a list; default 0.5 us. ``switch_model``: ``"device"`` (switches
        are store-and-forward devices) or ``"unwind"`` (the TACOS paper's direct links).
        Raises :class:`tacos.Error` for an unknown spec.
        """
        return cls._from_spec(spec, bandwidth, latency, switch_model, parameter="spec")

    @classmethod
    def _from_spec(cls, spec, bandwidth, latency, switch_model, parameter):
        """from_spec with errors naming ``parameter`` for the spec (``topology`` when a function
        was given a spec string)."""
        spec = _text(parameter, spec, "a generator spec such as 'torus2d:8x8'")
        bw, lat = _list_text("bandwidth", bandwidth), _list_text("latency", latency)
        switch_model = _text("switch_model", switch_model, "'device' or 'unwind'")
        with _PythonNames(topology=parameter):
            return cls(_tacos.load_topology(spec, bw, lat, switch_model), bw, lat, switch_model)

    @classmethod
    def from_file(cls, path, switch_model="device"):
        """Loads a topology file (tacos YAML or ASTRA-sim network YAML); link numbers come from
        the file. Raises :class:`tacos.Error` with ``file:line: what was expected``."""
        if not isinstance(path, (str, _os.PathLike)):
            raise Error(f"path: expected a file name (str or os.PathLike), got {path!r}")
        path = _os.fspath(path)
        switch_model = _text("switch_model", switch_model, "'device' or 'unwind'")
        with _PythonNames():
            return cls(_tacos.load_topology(path, "", "", switch_model), "", "", switch_model)

    def __reduce__(self):  # picklable for Dask: re-loaded from its spec on the other side
        spec, bw, lat, switch_model = self._args
        return (_load_again, (spec, bw, lat, switch_model))

    @property
    def spec(self):
        """The spec or file name it was made from (what ``--topology`` would be given)."""
        return self._native.spec

    @property
    def name(self):
        """The topology's name as reports print it."""
        return self._native.name

    @property
    def npus(self):
        """Number of NPUs (devices 0 .. npus-1)."""
        return self._native.npus

    @property
    def switches(self):
        """Number of switch devices (ids npus .. npus+switches-1)."""
        return self._native.switches

    @property
    def links(self):
        """Number of directed links."""
        return self._native.links

    @property
    def link_bandwidths_gibps(self):
        """The distinct bandwidths of its links, largest first, in GB/s of 2^30 B/s (the
        input convention): what was simulated, including a generator's own defaults."""
        return tuple(self._native.link_values()[0])

    @property
    def link_latencies_us(self):
        """The distinct latencies of its links in microseconds, smallest first."""
        return tuple(self._native.link_values()[1])

    def describe(self):
        """What ``tacos topology describe --json`` prints: NPUs, switches, links, degree range,
        diameter, ingress bandwidth, connectivity (a dict)."""
        return self._native.describe()

    def __repr__(self):
        return f"tacos.Topology({self.name!r}, npus={self.npus}, links={self.links})"


def _load_again(spec, bandwidth, latency, switch_model):
    native = _tacos.load_topology(spec, bandwidth, latency, switch_model)
    return Topology(native, bandwidth, latency, switch_model)


def _topology(topology):
    if isinstance(topology, Topology):
        return topology
    if isinstance(topology, (str, _os.PathLike)):
        text = _os.fspath(topology)
        if text.endswith((".yaml", ".yml")):
            return Topology.from_file(text)
        return Topology._from_spec(text, None, None, "device", parameter="topology")
    raise Error(f"topology: expected a tacos.Topology, a spec string or a file name, "
                f"got {topology!r}")


def _portfolio_text(portfolio):
    if isinstance(portfolio, bool):
        return "on" if portfolio else "off"
    if isinstance(portfolio, str):
        return portfolio  # "on" or "off"; anything else gets the command line's error
    raise Error(f"portfolio: expected True, False, 'on' or 'off', got {portfolio!r}")


def _auto_budget_text(auto_budget):
    if isinstance(auto_budget, bool) or not isinstance(
            auto_budget, (int, float, _np.integer, _np.floating)) or not auto_budget >= 0:
        raise Error(f"auto_budget: expected seconds as a number >= 0 (0: no limit), "
                    f"got {auto_budget!r}")
    return repr(float(auto_budget))


def _collective_args(collective, size, chunks_per_npu, seed, trials, link_model, root, npus,
                     all_reduce_mode, threads, portfolio=True, auto_budget=0):
    args = _tacos.CollectiveArgs()
    args.portfolio = _portfolio_text(portfolio)
    args.auto_budget = _auto_budget_text(auto_budget)
    args.collective = _text("collective", collective, "a collective such as 'all-gather'")
    args.size = _size_text(size)
    args.chunks_per_npu = _chunks_text(chunks_per_npu)
    args.link_model = _text("link_model", link_model, "'tacos' or 'astra'")
    args.all_reduce_mode = _text("all_reduce_mode", all_reduce_mode,
                                 "'pipelined' or 'sequential'")
    args.seed = _whole_number("seed", seed, 0)
    args.trials = _whole_number("trials", trials, 1)
    args.threads = _whole_number("threads", threads, 0)
    args.root = _root(root)
    args.npus = _npus_text(npus)
    return args


class Result:
    """One synthesized algorithm.

    Its fields are the keys of ``tacos synthesize --json`` (``result.collective_time_us``,
    ``result.bound_ratio``, ``result["seed"]``, ...; :attr:`report` holds that object as a dict),
    except ``transfers``, which is the schedule itself: a numpy structured array with fields
    ``src``, ``dst``, ``start_us``, ``end_us``, ``chunks`` (tuple of chunk ids) and ``reduce``
    (the --json count of transfers is ``result.report["transfers"]``, equal to its length unless
    ``time_only``).
    """

    def __init__(self, native):
        self._native = native
        self.report = native.report()
        self._transfers = None
        self._multicast = None  # per row of transfers: multicast group id, -1 unicast

    def __getattr__(self, name):
        report = self.__dict__.get("report")
        if report is not None and name in report:
            return report[name]
        raise AttributeError(name)

    def __getitem__(self, key):
        return self.report[key]

    def keys(self):
        """The ``--json`` keys, in the command line's order."""
        return self.report.keys()

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.report))

    def __repr__(self):
        r = self.report
        return (f"<tacos.Result {r['algorithm']} {r['collective']} on {r['topology']}: "
                f"{r['collective_time_us']} us, {r['transfers']} transfers>")

    @property
    def transfers(self):
        """The schedule as a numpy structured array (:data:`TRANSFER_DTYPE`), sorted as the
        synthesizer produced it; empty under ``time_only``."""
        if self._transfers is None:
            c = self._native.transfer_columns()
            # Multicast groups (docs/switch-fabrics.md) ride beside the array, whose dtype
            # stays as it was: verify() passes them on when given the unedited schedule.
            self._multicast = c["multicast"]
            n = len(c["src"])
            array = _np.empty(n, dtype=TRANSFER_DTYPE)
            array["src"] = c["src"]
            array["dst"] = c["dst"]
            array["start_us"] = c["start_ps"] / 1e6
            array["end_us"] = c["end_ps"] / 1e6
            array["reduce"] = c["reduce"]
            offsets, ids = c["chunk_offsets"], c["chunk_ids"].tolist()
            chunks = _np.empty(n, dtype=object)
            for i in range(n):
                chunks[i] = tuple(ids[offsets[i]:offsets[i + 1]])
            array["chunks"] = chunks
            self._transfers = array
        return self._transfers

    def to_pandas(self):
        """The transfers as a pandas DataFrame (one row per message)."""
        import pandas as pd

        t = self.transfers
        return pd.DataFrame({name: t[name] for name in TRANSFER_DTYPE.names})

    def write(self, dir, formats=("json", "chakra", "msccl")):
        """Writes the algorithm into ``dir`` like ``tacos synthesize --out DIR --format ...``:
        ``algorithm.json``, ``chakra/tacos.RANK.et`` plus ``astra/`` (ASTRA-sim run files),
        ``msccl/tacos_COLLECTIVE.xml``, ``trace.json`` (format ``trace``: a Chrome trace of the
        simulated schedule), ``view.html`` (format ``html``: the viewer). All or nothing: formats are staged and moved in only
        when every one succeeded. Returns the ``astra_sim`` object of ``--json`` (what ASTRA-sim
        will report for the bundle) when ``chakra`` is written, else None."""
        if not isinstance(dir, (str, _os.PathLike)):
            raise Error(f"dir: expected a folder name (str or os.PathLike), got {dir!r}")
        if isinstance(formats, str):
            formats = (formats,)
        if not isinstance(formats, (list, tuple)) or not formats or not all(
                isinstance(f, str) for f in formats):
            raise Error("formats: expected 'json', 'chakra', 'msccl' or a list of them, "
                        f"got {formats!r}")
        with _PythonNames():
            return self._native.write(_os.fspath(dir), ",".join(formats))


def synthesize(topology, collective="all-gather", size="64MiB", chunks_per_npu=1,
               algorithm="tacos", seed=1, trials=1, link_model="tacos", root=None, npus=None,
               time_only=False, all_reduce_mode="pipelined", threads=0, portfolio=True,
               auto_budget=0):
    """Synthesizes (or builds a baseline) and verifies one collective algorithm, like
    ``tacos synthesize --json``.

    ``topology``: a :class:`Topology` (or a spec string). ``collective``: one of
    :data:`COLLECTIVES`. ``size``: the collective's whole buffer per NPU, bytes or ``"64MiB"``.
    ``chunks_per_npu``: K, or ``"auto"`` (K = 1, 2, 4, ... and the fastest kept).
    ``auto_budget`` (``--auto-budget``): with ``"auto"``, seconds after which no larger K is
    started (the K under way is finished; 0, the default: no limit); ``result.auto_stopped``
    says when it cut the search short (None otherwise).
    ``algorithm``: one of :data:`ALGORITHMS`. ``seed``/``trials``: seeds seed .. seed+trials-1
    are tried, the fastest kept. ``link_model``: ``"tacos"`` or ``"astra"``. ``root``: root NPU
    of broadcast/reduce/gather/scatter. ``npus``: run among these NPUs only (``"0-7,16-23"`` or a
    list). ``time_only``: keep no transfer list (huge systems; ``verified`` is None): the greedy,
    with batched messages where faster unless ``portfolio`` is False.
    ``threads``: for trials, 0 = all cores. ``portfolio`` (``--portfolio``; True/``"on"`` by
    default, False/``"off"``): with ``algorithm="tacos"`` also build every applicable baseline
    for the same collective and K, time all with the same simulator and keep the fastest
    schedule (ties: the greedy); ``result.portfolio_winner`` names the candidate kept
    (``"tacos"`` or a baseline; None when the portfolio did not run, ``portfolio_skipped`` says
    why) and ``result.greedy_time_us`` is tacos's own schedule's time (the greedy, with message
    coalescing on direct links under the tacos link model, and its ports' orders justified
    through switches; with ``chunks_per_npu="auto"`` its best over the K it finished: the
    baselines are built first, and the greedy's last K stops once it cannot beat the fastest
    of them; None where that was its only K, so it finished none, or where a baseline within
    0.5% of the lower bound made it needless, ``portfolio_skipped`` then says so). False: the TACOS greedy without baselines, not coalesced (still
    justified). Not run with ``time_only`` nor beyond 262,144 estimated baseline
    transfers (``kPortfolioBudget``; ``portfolio_skipped`` says so).

    Returns a :class:`Result`. Raises :class:`tacos.Error` naming the parameter and the value it
    got.
    """
    t = _topology(topology)
    args = _collective_args(collective, size, chunks_per_npu, seed, trials, link_model, root,
                            npus, all_reduce_mode, threads, portfolio, auto_budget)
    algorithm = _text("algorithm", algorithm, "one of " + ", ".join(ALGORITHMS))
    if not isinstance(time_only, bool):
        raise Error(f"time_only: expected True or False, got {time_only!r}")
    with _PythonNames():
        return Result(_tacos.synthesize(t._native, args, algorithm, time_only))


def compare(topology, collective="all-gather", size="64MiB", chunks_per_npu=1,
            algorithms=None, seed=1, trials=1, link_model="tacos", root=None, npus=None,
            all_reduce_mode="pipelined", threads=0, portfolio=True):
    """Runs TACOS and the baselines through the same simulator, like ``tacos compare --json``.

    Returns a pandas DataFrame with one row per algorithm (the ``results`` rows: algorithm,
    chunks_per_npu, collective_time_us, algbw_gbps, busbw_gbps (GB/s of 10^9 B/s, as
    nccl-tests), lower_bound_us, bound_ratio, store_and_forward_bound_us and
    store_and_forward_ratio (tacos link model on switch fabrics, and for Broadcast and Reduce
    on networks of NPUs alone; else None), verified,
    synthesis_seconds, skipped_reason, portfolio_winner, greedy_time_us: the last two set on the
    tacos row only); ``df.attrs`` holds the rest of the object (topology,
    collective, size_bytes, link_model). ``algorithms`` None runs every algorithm the fabric
    can (``nvls`` only where a switch reduces). Arguments as for :func:`synthesize`; with ``portfolio``
    on (the default) the tacos row is the portfolio's pick, never slower than a baseline row.
    """
    import pandas as pd

    t = _topology(topology)
    args = _collective_args(collective, size, chunks_per_npu, seed, trials, link_model, root,
                            npus, all_reduce_mode, threads, portfolio)
    if algorithms is None:
        names = ""  # every algorithm the fabric can run, as the command line's default
    elif isinstance(algorithms, str):
        names = algorithms
    elif isinstance(algorithms, (list, tuple)) and algorithms and all(
            isinstance(a, str) for a in algorithms):
        names = ",".join(algorithms)
    else:
        raise Error(f"algorithms: expected None, a list of names from tacos.ALGORITHMS or a "
                    f"string like 'tacos,ring', got {algorithms!r}")
    with _PythonNames():
        out = _tacos.compare(t._native, args, names)
    frame = pd.DataFrame(out.pop("results"))
    frame.attrs.update(out)
    return frame


def bound(topology, collective="all-gather", size="64MiB", chunks_per_npu=1, root=None,
          npus=None, link_model="tacos"):
    """Lower bounds on the collective's time, like ``tacos bound --json`` (a dict: lower_bound_us,
    latency_bound_us, bandwidth_bound_us, store_and_forward_bound_us (a bound under the tacos
    link model on switch fabrics and for Broadcast and Reduce relayed by NPUs, None where it
    does not apply), algbw_at_bound_gbps,
    busbw_at_bound_gbps (GB/s of 10^9 B/s, as nccl-tests), method, ...)."""
    t = _topology(topology)
    collective = _text("collective", collective, "a collective such as 'all-gather'")
    link_model = _text("link_model", link_model, "'tacos' or 'astra'")
    size, chunks, npus = _size_text(size), _chunks_text(chunks_per_npu), _npus_text(npus)
    with _PythonNames():
        return _tacos.bound(t._native, collective, size, chunks, _root(root), npus, link_model)


def workload(topology, et, comm_groups=None, out=None, algorithm="tacos", chunks_per_npu=16,
             seed=1, peak_tflops=900, local_mem_bw=1600):
    """The collectives of a training-step workload and the step tacos predicts for it, like
    ``tacos workload --json`` (a dict: ``collectives``, one per distinct kind, size and group,
    each with time_us, astra_sim_expected_us, best_baseline, baseline_time_us, lower_bound_us,
    members, per_rank; ``serial_communication_us`` per rank; ``predicted_step_us``, the step as
    the bundle runs in ASTRA-sim, and ``predicted_ranks``, per rank its step_time_us, compute_us
    and exposed_communication_us). ``et``: the workload's PREFIX (PREFIX.RANK.et);
    ``comm_groups``: its process-group JSON (default PREFIX.json); ``out``: also write the
    ASTRA-sim bundle there (run it with ``tacos astra-run``); ``peak_tflops``, ``local_mem_bw``
    (GB/s): ASTRA-sim's roofline for the compute nodes. See docs/workload.md."""
    t = _topology(topology)
    return _tacos.workload(t._native, _os.fspath(et),
                           "" if comm_groups is None else _os.fspath(comm_groups),
                           "" if out is None else _os.fspath(out), algorithm,
                           _chunks_text(chunks_per_npu), int(seed), float(peak_tflops),
                           float(local_mem_bw))


def simulate(algorithm, topology=None, link_model="tacos", size=None):
    """Simulates an algorithm file (tacos JSON ``.json``, MSCCL-IR XML ``.xml`` or a Chakra ET
    prefix/directory) with the congestion-aware simulator, like ``tacos simulate --json``.
    ``topology``: what it runs on (default: fully connected among its NPUs). ``size``: for files
    that carry none. Returns the dict (collective_time_us, messages, verified, ...)."""
    return _run_file(algorithm, topology, link_model, size, verify=False)


def verify(algorithm, topology=None, link_model="tacos", size=None, transfers=None):
    """Checks that an algorithm implements its collective; raises :class:`tacos.Error` if not.

    ``algorithm`` is a file (as for :func:`simulate`, like ``tacos verify --json``) or a
    :class:`Result`: then its ``transfers`` array (or the ``transfers`` given, e.g. an edited
    copy) is rebuilt into a schedule and replayed by the verifier on the result's topology and
    link model: every message on a link or switch path, each chunk present at its source before
    it leaves, links never double-booked, every postcondition met. Returns a dict with
    ``verified`` and ``collective_time_us`` (the replayed time).
    """
    if isinstance(algorithm, Result):
        t = algorithm.transfers if transfers is None else _np.asarray(transfers)
        multicast = None
        if "multicast" in (t.dtype.names or ()):
            multicast = _np.ascontiguousarray(t["multicast"], dtype=_np.int32)
        else:
            algorithm.transfers  # fills algorithm._multicast
            # An edited copy of the same length keeps the groups row by row.
            if len(t) == len(algorithm._multicast):
                multicast = _np.ascontiguousarray(algorithm._multicast, dtype=_np.int32)
        counts = _np.fromiter((len(c) for c in t["chunks"]), dtype=_np.int64, count=len(t))
        offsets = _np.zeros(len(t) + 1, dtype=_np.int64)
        _np.cumsum(counts, out=offsets[1:])
        ids = _np.fromiter((i for c in t["chunks"] for i in c), dtype=_np.int32,
                           count=int(offsets[-1]))
        out = algorithm._native.verify_columns(
            _np.ascontiguousarray(t["src"], dtype=_np.int32),
            _np.ascontiguousarray(t["dst"], dtype=_np.int32),
            _np.rint(_np.asarray(t["start_us"], dtype=_np.float64) * 1e6).astype(_np.int64),
            _np.rint(_np.asarray(t["end_us"], dtype=_np.float64) * 1e6).astype(_np.int64),
            offsets, ids, _np.ascontiguousarray(t["reduce"], dtype=_np.bool_), multicast)
        if not out["verified"]:
            raise Error("verify: transfers: " + out["verify_error"])
        return out
    return _run_file(algorithm, topology, link_model, size, verify=True)


def _run_file(algorithm, topology, link_model, size, verify):
    """simulate() and verify() of an algorithm file: the command line's run of --algorithm."""
    if not isinstance(algorithm, (str, _os.PathLike)):
        raise Error(f"algorithm: expected a file name (str or os.PathLike) or a tacos.Result, "
                    f"got {algorithm!r}")
    t = None if topology is None else _topology(topology)._native
    link_model = _text("link_model", link_model, "'tacos' or 'astra'")
    size = None if size is None else _size_text(size)
    with _PythonNames():
        return _tacos.run_file(_os.fspath(algorithm), t, link_model, size, verify)
