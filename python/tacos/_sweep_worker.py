"""The sweep's own LocalCluster workers ignore Ctrl-C.

Ctrl-C in a terminal reaches every process of its process group, the LocalCluster's worker
processes included. Each would print a ``KeyboardInterrupt`` traceback; the sweep's own process
is the one that handles the interrupt (it closes the cluster, which stops them), so the workers
ignore SIGINT. Workers started by hand (``dask worker``) never get this plugin and keep their own
Ctrl-C.
"""

import signal

from distributed.diagnostics.plugin import WorkerPlugin


class IgnoreCtrlC(WorkerPlugin):
    """Registered on the LocalCluster: every worker process, restarted ones included, ignores
    SIGINT."""

    name = "tacos-sweep-ignore-ctrl-c"

    def setup(self, worker):
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the process's main thread: a thread-based worker, nothing to do
            pass
