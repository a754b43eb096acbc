"""Benchmark: ``benchmarks.bench_grid``'s study as Ray tasks on a two-node loopback Ray cluster.

    .venv/bin/python -m benchmarks.bench_grid_cluster [bench_grid options, e.g. --cells 30 --json FILE]

Starts the cluster the cluster tests use (:class:`metaeval.testing.cluster.LoopbackCluster`: ``ray start --head``
and ``ray start --address``, one CPU each, every port on 127.0.0.1), runs ``python -m benchmarks.bench_grid --ray
--address HOST:PORT --study-workers auto ...`` in the nodes' environment (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=1``, the
same ``RAY_AUTH_MODE``), and stops the cluster; exits with the benchmark's status.  Prints what ``bench_grid`` prints.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from metaeval.testing.cluster import LoopbackCluster

    with tempfile.TemporaryDirectory() as tmp:
        cluster = LoopbackCluster(Path(tmp)).start()
        try:
            args = [sys.executable, "-m", "benchmarks.bench_grid", "--ray", "--address", cluster.address,
                    "--study-workers", "auto", *(sys.argv[1:] if argv is None else argv)]
            return subprocess.run(args, env=cluster.env, cwd=ROOT).returncode
        finally:
            cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
