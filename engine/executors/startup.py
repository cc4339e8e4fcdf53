"""The Ray cluster of a run, brought up in a thread of its own from the moment the executor is made,
so that the driver goes on meanwhile (model servers, the run's files, the dashboard, Ctrl-C) and
waits for the cluster only when the first games are to be sent.

A local cluster started for the run is Ray's own (``ray.init``) less three processes that a run
does not use and that the start waited for or lost CPU to: the autoscaler's monitor (a local
cluster has a fixed size), the log monitor (it sends the workers' output to the driver, and
``log_to_driver`` is off) and the API server (without the dashboard it serves usage statistics
alone, which ``ray.init`` turns off). ``ray.init`` took 4.3 s for 6.8 s on 2 cores under a load of 9.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any

QUIET: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False}  # workers' output stays in Ray's logs
_starting = threading.Lock()  # one ``ray.init`` at a time, whichever executor asks


def local_options(workers: int) -> dict[str, Any]:
    """``ray.init``'s options for a local cluster of ``workers`` workers, as a run starts it."""
    return {"num_cpus": workers, "include_dashboard": False, **QUIET}


class Startup:
    """``ray.init`` under way: a local cluster of ``workers`` (``address`` None) or a connection to the
    cluster at ``address``; nothing when this process is already connected."""

    def __init__(self, workers: int, address: str | None) -> None:
        self.workers = workers
        self.address = address
        self.started_cluster = False
        self.error: BaseException | None = None
        self.ray: Any = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._start, name="ray-startup", daemon=True)
        self.thread.start()

    def _start(self) -> None:
        try:
            import ray

            with _starting:
                if not ray.is_initialized():
                    if self.address is None:
                        _init_local(ray, self.workers)
                        self.started_cluster = True
                    else:
                        ray.init(address=self.address, **QUIET)
            self.ray = ray
        except ImportError:
            self.error = ValueError("--executor ray needs Ray: pip install -e '.[ray]'")
        except BaseException as exc:  # given to the driver by ``wait``
            self.error = exc
        self.ready.set()
        if self.started_cluster:
            # Ray ties the processes of the cluster it starts to the thread that started them (they
            # get a parent-death signal): this thread lasts as long as the process.
            threading.Event().wait()

    def wait(self) -> Any:
        """The ``ray`` module once this process is connected; the start's failure raised here."""
        self.ready.wait()
        if self.error is not None:
            raise self.error
        return self.ray



def _init_local(ray: Any, workers: int) -> None:
    """``ray.init`` of a local cluster without the three processes. Ray's ``RayParams`` takes
    ``no_monitor`` and ``include_log_monitor`` (as ``ray start`` does), which ``ray.init`` does not pass
    on: they are given as its defaults for this one call. The API server, which ``ray.init`` starts
    and waits for even without the dashboard (it then serves usage statistics alone, which ``ray.init``
    turns off), is left out for this call too. A Ray without these hooks starts its cluster as it is."""
    try:
        from ray._private.node import Node
        from ray._private.parameter import RayParams

        plain, api_server = RayParams.__init__, Node.start_api_server
        inspect.signature(plain).bind_partial(no_monitor=True, include_log_monitor=False)
    except (ImportError, AttributeError, TypeError):
        ray.init(**local_options(workers))
        return

    def lean(self, *args, **kwargs) -> None:
        kwargs.setdefault("no_monitor", True)
        kwargs.setdefault("include_log_monitor", False)
        plain(self, *args, **kwargs)

    RayParams.__init__, Node.start_api_server = lean, lambda self, **kwargs: None  # type: ignore[method-assign]  # for this one call
    try:
        ray.init(**local_options(workers))
    finally:
        RayParams.__init__, Node.start_api_server = plain, api_server  # type: ignore[method-assign]  # as they were
