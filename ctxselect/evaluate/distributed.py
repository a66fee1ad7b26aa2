"""The bench on Dask distributed (``ctxselect bench --engine dask``; the ``dask`` extra).

The client splits each dump into :class:`~ctxselect.model.partitions.Partition` descriptions (a
path and a byte range: the client reads nothing but the file sizes) and submits one task per
partition; a worker reads its partition, validates every query, selects each with every method
(:func:`ctxselect.evaluate.bench._bench_query`, the function the local run calls) and sends back
only the records, the query ids with their row numbers, and the row count. The client takes the
results in file order, so the records, their order, the summaries and the first error are those
of the local run (latencies apart):

- a partition's read error gets its file line (the row number plus the lines of the partitions
  before it) and is raised once every partition before it is clean; a query id seen before in the
  same dump is the local run's "duplicate query id" at the same line;
- a budget error (``budget_scale`` overflowing one query's budget) is raised only when every
  partition read cleanly, as the local run reads everything before it runs anything.

Dask is imported only here, and only when the engine runs; without it the error names the extra.
Each worker process loads the kernels and the solver once, on its first partition, before any
latency it measures (as the local run warms up in its own process).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ctxselect.errors import InputError
from ctxselect.evaluate.bench import (BenchResult, QueryRecord, _bench_query, bench_options, group_value, summarize,
                                      with_budget)
from ctxselect.evaluate.labelled import DEPTHS, check_depths
from ctxselect.evaluate.paraphrase import Paraphrases, paraphrases_of
from ctxselect.evaluate.relevance import ALERT_THRESHOLD
from ctxselect.model import validation as checks
from ctxselect.model.io import Query
from ctxselect.model.partitions import READERS, Partition, split_file
from ctxselect.selection.solvers.registry import Method

__all__ = ["run_bench_dask", "partition_target", "local_cluster", "PartResult", "run_partition",
           "check_scheduler", "check_workers", "max_local_workers"]

#: Partitions per worker the client aims at (more than one, so a slow partition is not the tail),
#: and the bounds of a partition's size in bytes.
PARTITIONS_PER_WORKER = 8
MIN_PARTITION_BYTES = 16 * 1024
MAX_PARTITION_BYTES = 64 * 1024 * 1024

_WARM = False  # this worker process has loaded the kernels and the solver


@dataclass
class PartResult:
    """What a worker sends back for one partition.

    ``lines``: rows read (the partition's row count, or the failing row's number); ``ids``: (row,
    query id) of each query read; ``error``: a read error, located but for its line (it is row
    ``lines``); ``budget_error``: a budget error of one of its queries (when it read cleanly)."""

    lines: int
    ids: list[tuple[int, str]] = field(default_factory=list)
    records: list[QueryRecord] = field(default_factory=list)
    error: InputError | None = None
    budget_error: InputError | None = None


def run_partition(part: Partition, methods: list[str], options: dict, by: list[str],
                  budget: int | None, budget_scale: float | None, metrics: dict | None = None) -> PartResult:
    """Read, validate and bench one partition (the task a worker runs)."""
    global _WARM
    rows = READERS[part.format].rows(part)
    queries: list[Query] = []
    ids: list[tuple[int, str]] = []
    try:
        for row, data in rows:
            try:
                query = Query.from_dict(data)
                for path in by:
                    group_value(query, path)  # as the local run refuses a field that is no group
            except InputError as err:
                raise err.located(file=part.name) from None
            ids.append((row, query.query_id))
            queries.append(query)
    except InputError as err:
        return PartResult(rows.lines, ids, error=err)
    try:
        metrics = metrics or {"depths": check_depths(DEPTHS), "paraphrases": Paraphrases.DUMP,
                              "relevance_alert": ALERT_THRESHOLD}
        work = [(with_budget(q, budget, budget_scale), methods, options, by,
                 {"depths": metrics["depths"], "paraphrases": paraphrases_of(q, metrics["paraphrases"]),
                  "relevance_alert": metrics["relevance_alert"]}) for q in queries]
    except InputError as err:
        return PartResult(rows.lines, ids, budget_error=err)
    del queries
    if work and not _WARM:
        _bench_query(work[0])  # the kernels and the solver load here, outside any measured latency
        _WARM = True
    records = [r for item in work for r in _bench_query(item)]
    return PartResult(rows.lines, ids, records)


def partition_target(sizes: Iterable[int], workers: int) -> int:
    """Bytes per partition: :data:`PARTITIONS_PER_WORKER` partitions per worker over all the
    dumps, within [:data:`MIN_PARTITION_BYTES`, :data:`MAX_PARTITION_BYTES`]."""
    total = sum(sizes)
    return int(min(MAX_PARTITION_BYTES, max(MIN_PARTITION_BYTES, math.ceil(total / (PARTITIONS_PER_WORKER *
                                                                                     max(1, workers))))))


def _dask():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:
        raise InputError(field="--engine", message="the dask engine needs dask.distributed",
                         expected="pip install 'ctxselect[dask]'") from None
    return distributed


#: The schemes of a scheduler address (Dask's transports but ``inproc``, which is one process's own).
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
_ADDRESS = re.compile(r"(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})",
                      re.ASCII)


def check_scheduler(address: str, field: str = "scheduler") -> str:
    """``address`` if it is a Dask scheduler address, ``[SCHEME://]HOST:PORT``, checked before any client
    is made (Dask parses an empty or port-less address only once its client has started, and that
    half-made client then waits 40 s at exit and prints a traceback).

    Raises
    ------
    InputError
        Naming ``field``: not a string, empty, blank or holding whitespace, no port, a port outside
        1-65535, a path after the port, or a scheme not in :data:`SCHEDULER_SCHEMES`.
    """
    if not isinstance(address, str):
        raise InputError(field=field, expected="a Dask scheduler address (str)", found=type(address).__name__)
    match = _ADDRESS.fullmatch(address)
    if (match is None or (match["scheme"] or "tcp") not in SCHEDULER_SCHEMES
            or not 1 <= int(match["port"]) <= 65535):
        raise InputError(field=field, message="not a Dask scheduler address",
                         expected=f"[SCHEME://]HOST:PORT with a port from 1 to 65535 and a scheme of "
                                  f"{', '.join(SCHEDULER_SCHEMES)} (e.g. tcp://scheduler:8786)",
                         found=address, has_found=True)
    return address


def _client(distributed, target, address: str | None):
    """A client of ``target`` (the local cluster, or the scheduler's address); whatever its
    constructor raises is one InputError, and a client it left half made is closed first (Dask
    keeps it, and at exit its ``__del__`` waits 40 s for a loop that is gone and prints a traceback)."""
    made = []

    class Client(distributed.Client):
        def start(self, **kwargs):
            made.append(self)  # the client, before anything its start may raise
            return super().start(**kwargs)

    try:
        return Client(target, timeout="20s", set_as_default=False)
    except BaseException as err:
        for client in made:
            with contextlib.suppress(Exception):  # the error that matters is the constructor's
                client.close(timeout=5)
        if not isinstance(err, Exception):
            raise  # KeyboardInterrupt, SystemExit: as they came, with the client closed
        where = "the local cluster" if address is None else f"the Dask scheduler at {address}"
        raise InputError(field="--scheduler" if address is not None else "--engine",
                         message=f"cannot connect to {where} ({type(err).__name__}: {' '.join(str(err).split())})"
                         ) from None


def max_local_workers() -> int:
    """The most worker processes a local cluster may have: twice the CPU count.

    A worker is a process of one thread that loads the kernels and holds its partition; past the
    cores they only pre-empt one another (docs/dask.md: 4 workers on 2 cores were slower than 2),
    and dozens on a small machine time out at shutdown (a review's 64 on 2 cores: 36 tracebacks). Twice
    the cores still lets that oversubscription be measured (benchmarks/dask_throughput.py runs 4 on 2)."""
    return 2 * (os.cpu_count() or 1)


def check_workers(workers: int, field: str = "workers") -> int:
    """``workers`` if it is an integer from 1 to :func:`max_local_workers` (a local cluster's size).

    Raises
    ------
    InputError
        Naming ``field``, the bound and this machine's CPU count.
    """
    workers = checks.integer(workers, field, low=1)
    most = max_local_workers()
    if workers > most:
        raise InputError(field=field, message=f"a local cluster runs at most {most} worker processes here "
                         f"(twice the {os.cpu_count() or 1} CPUs)", expected=f"an integer from 1 to {most}",
                         found=workers)
    return workers


def local_cluster(workers: int):
    """A LocalCluster of ``workers`` worker processes with one thread each and no dashboard.

    Processes, not threads: a selection is mostly Python holding the GIL, so threads of one
    process would not run in parallel. The scheduler's HTTP routes (health, metrics) listen on any
    free port, not 8787, so two clusters on one machine do not collide."""
    distributed = _dask()
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                    scheduler_kwargs={"dashboard_address": ":0"},  # its HTTP routes: any free port
                                    silence_logs=logging.ERROR)


class _Merger:
    """Takes partition results in file order: line numbers, duplicate ids, the first error."""

    def __init__(self, parts: list[Partition | InputError]) -> None:
        self.parts = parts
        self.next = 0
        self.pending: dict[int, PartResult] = {}
        self.lines: dict[str, int] = {}
        self.seen: dict[str, set[str]] = {}
        self.first: dict[str, str] = {}  # query id -> the dump it first came from (ids unique across dumps)
        self.records: list[QueryRecord] = []
        self.queries = 0
        self.budget_error: InputError | None = None

    def add(self, index: int, result: PartResult) -> None:
        self.pending[index] = result
        self.flush()

    def flush(self) -> None:
        """Take every result that is next in file order (raising the first error in file order)."""
        while self.next < len(self.parts) and (isinstance(self.parts[self.next], InputError)
                                                or self.next in self.pending):
            item = self.parts[self.next]
            if isinstance(item, InputError):
                raise item
            self._take(item, self.pending.pop(self.next))
            self.next += 1

    def _take(self, part: Partition, result: PartResult) -> None:
        before = self.lines.get(part.path, 0)
        where = "row" if part.format == "parquet" else "line"  # as the local reader names a place
        seen = self.seen.setdefault(part.path, set())
        for row, qid in result.ids:
            if qid in seen:
                raise InputError(file=part.name, query_id=qid, field="query_id", message="duplicate query id",
                                 expected="query ids unique within a dump").located(**{where: before + row})
            seen.add(qid)
            if self.first.setdefault(qid, part.name) != part.name:
                raise InputError(file=part.name, query_id=qid, field="query_id",
                                 message=f"the query id is also in {self.first[qid]}",
                                 expected="query ids unique across the dumps of one bench (records pair by id)")
        if result.error is not None:
            raise result.error.located(**{where: before + result.lines})
        self.lines[part.path] = before + result.lines
        self.queries += len(result.ids)
        if result.budget_error is not None and self.budget_error is None:
            self.budget_error = result.budget_error
        self.records.extend(result.records)

    @property
    def done(self) -> bool:
        return self.next >= len(self.parts)


def _split(dumps: Sequence[str | os.PathLike], target: int | None, workers: int) -> list[Partition | InputError]:
    """Every dump's partitions in order; a dump that cannot be split stands as its error, raised
    in its turn (after the errors of the dumps before it)."""
    sizes = []
    for dump in dumps:
        try:
            sizes.append(os.stat(dump).st_size)
        except (OSError, ValueError):
            sizes.append(0)
    target = target or partition_target(sizes, workers)
    out: list[Partition | InputError] = []
    for dump in dumps:
        try:
            out.extend(split_file(dump, target))
        except InputError as err:
            out.append(err)
    return out


def run_bench_dask(
    dumps: Sequence[str | os.PathLike],
    methods: Sequence[str | Method] = ("greedy", "topk", "density", "mmr", "optimal"),
    *,
    budget: int | None = None,
    budget_scale: float | None = None,
    select_options: dict | None = None,
    by: Sequence[str] = (),
    scheduler: str | None = None,
    workers: int | None = None,
    partition_bytes: int | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    depths: Sequence[int] = DEPTHS,
    paraphrases: str | Paraphrases = Paraphrases.DUMP,
    relevance_alert: float = ALERT_THRESHOLD,
) -> BenchResult:
    """:func:`~ctxselect.evaluate.bench.run_bench` over the dumps (read in partitions by Dask
    workers): the same records and summaries, latencies apart.

    Parameters
    ----------
    dumps : sequence of paths
        JSONL dumps, regular files the workers can open at the same path.
    methods, budget, budget_scale, select_options, by, depths, paraphrases, relevance_alert
        As :func:`~ctxselect.evaluate.bench.run_bench`.
    scheduler : str, optional
        The address of a running Dask scheduler (``tcp://host:8786``); by default a
        :func:`local_cluster` of ``workers`` processes (the CPU count when None, at most
        :func:`max_local_workers`), closed at the end.
    partition_bytes : int, optional
        Bytes per partition (default :func:`partition_target`).
    progress : callable, optional
        Called with (bytes done, bytes in all, queries done) after each partition.

    Raises
    ------
    InputError
        The first error the local run would raise (file, line, query, field), a scheduler that is
        no address (:func:`check_scheduler`, before any client is made) or cannot be reached (the
        client closed first), or a missing dask (naming the ``dask`` extra).
    """
    names, by, metrics = bench_options(methods, budget, budget_scale, by, depths, paraphrases, relevance_alert)
    if scheduler is not None:
        check_scheduler(scheduler)
    if workers is not None:
        checks.integer(workers, "workers", low=1)  # the partitions' count with a scheduler; else the cluster's size
        if scheduler is None:
            check_workers(workers)
    if partition_bytes is not None:
        checks.integer(partition_bytes, "partition_bytes", low=1)
    distributed = _dask()
    cluster = None
    if scheduler is None:
        cluster = local_cluster(workers or os.cpu_count() or 1)
    try:
        with _client(distributed, cluster if cluster is not None else scheduler, scheduler) as client:
            count = workers or sum(client.nthreads().values()) or 1
            merger = _run(client, distributed, _split(dumps, partition_bytes, count), names,
                          dict(select_options or {}), by, budget, budget_scale, progress, metrics)
    finally:
        if cluster is not None:
            cluster.close()
    if merger.budget_error is not None:
        raise merger.budget_error
    if not merger.queries:
        raise InputError(field="queries", message="no query to bench")
    result = summarize(merger.records, names, queries=merger.queries)
    result.by = list(by)
    return result


def _run(client, distributed, parts, names, options, by, budget, budget_scale, progress, metrics) -> _Merger:
    merger = _Merger(parts)
    run = uuid.uuid4().hex[:8]
    futures = {}
    for k, part in enumerate(parts):
        if isinstance(part, Partition):
            key = f"ctxselect-bench-{run}-{k}"
            futures[key] = (k, client.submit(run_partition, part, names, options, by, budget, budget_scale, metrics,
                                             key=key, pure=False))
    total = sum(p.weight for p in parts if isinstance(p, Partition))
    done = 0
    try:
        merger.flush()  # raises at once when the first dump cannot be split
        for future in distributed.as_completed([f for _, f in futures.values()], loop=client.loop):
            if future.cancelled():
                continue
            k, _ = futures.pop(future.key)
            result = future.result()
            future.release()
            done += parts[k].weight
            merger.add(k, result)
            if progress:
                progress(done, total, merger.queries)
            if result.error is not None:  # later partitions cannot change the outcome
                client.cancel([f for j, f in futures.values() if j > k])
        assert merger.done, "every partition was taken"
    finally:
        if futures:
            client.cancel([f for _, f in futures.values()])
    return merger
