"""Where a sweep's jobs run: in the driver, on local worker processes, or on a Dask cluster.

Why this module exists: the driver submits :func:`arena_tui.sweep.jobs.run_job` calls and
collects their futures, and must not care what runs them. All three places are a
``concurrent.futures.Executor``: an :class:`InProcess` one (``--workers 1``: each job runs
in the caller when submitted, no pickling, the easiest to debug), a
``ProcessPoolExecutor`` of fresh interpreters (``forkserver``: nothing of the driver's state
is forked into a worker, and each worker imports arena once), or Dask distributed's
executor over a ``Client`` of the scheduler at ``--cluster`` (``Client.get_executor()``).
A job and its result are the same plain structs everywhere, so results are identical
whatever ran them.

Dask is imported only for ``--cluster``, with a one-line error naming the extra to install
when it is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ParamSpec, TypeVar

from arena_tui.sweep import SweepError
from arena_tui.util.workers import local_pool, usable_cores

P = ParamSpec("P")
T = TypeVar("T")
CONNECT_TIMEOUT_S = 10  # how long to try reaching a cluster's scheduler


class InProcess(Executor):
    """An executor that runs each call in the caller, when it is submitted."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # Ctrl-C and the like stop the driver at once
            future.set_exception(exc)
        return future


def executor(workers: int | None, cluster: str | None) -> AbstractContextManager[Executor]:
    """The executor to run jobs on, shut down when the block ends.

    ``cluster`` (``tcp://HOST:PORT``, a Dask scheduler): its executor; else ``workers``
    local processes (None: :func:`usable_cores`; 0 or 1, or one usable core: in the caller).
    """
    if workers is not None and workers < 0:
        raise SweepError(f"--workers {workers}: a number of processes, 0 or more")
    if cluster is not None:
        return _dask(cluster)
    n = usable_cores() if workers is None else workers
    if n <= 1:
        return _in_process()
    return _pool(n)


@contextmanager
def _in_process() -> Iterator[Executor]:
    with InProcess() as ex:
        yield ex


def _pool(n: int) -> AbstractContextManager[Executor]:
    return local_pool(n, ["arena_tui.sweep.jobs"])


@contextmanager
def _dask(address: str) -> Iterator[Executor]:
    try:
        import distributed
    except ImportError:
        raise SweepError("--cluster needs Dask distributed: pip install -e '.[cluster]'") from None
    client = _connect(distributed, address)
    try:
        with client.get_executor(pure=False) as ex:
            yield ex
    finally:
        client.close()


def _connect(distributed: Any, address: str) -> Any:
    """A Client of the scheduler at ``address``, or one line saying why not."""
    try:
        return distributed.Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SweepError(
            f"--cluster {address}: no Dask scheduler answered ({why}); start one with "
            "`dask scheduler` and workers with `dask worker tcp://HOST:8786` (docs/sweep.md)"
        ) from None
