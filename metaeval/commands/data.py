"""``metaeval data``: list, fetch, locate and describe datasets.

    metaeval data list
    metaeval data fetch NAME [--from PATH_OR_URL] [--force]
    metaeval data path NAME
    metaeval data info NAME_OR_PATH
"""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("data", help="list, fetch and locate datasets (registry with checksums; bundled demo)",
                              description="Named datasets with public sources and checksums, fetched into the cache "
                                          "($METAEVAL_CACHE or ~/.cache/metaeval).")
    sub = p.add_subparsers(dest="data_command", metavar="ACTION")
    sub.required = True

    ls = sub.add_parser("list", help="table of registered datasets and their cache status")
    ls.set_defaults(func=run_list)

    fe = sub.add_parser("fetch", help="copy or download a dataset into the cache and verify its checksums")
    fe.add_argument("name", help="registered dataset name (see `metaeval data list`)")
    fe.add_argument("--from", dest="source", metavar="PATH_OR_URL",
                    help="a local file, a folder holding the dataset's files, or a URL (default: the registered URLs)")
    fe.add_argument("--force", action="store_true", help="fetch again even if a verified copy is cached")
    fe.set_defaults(func=run_fetch)

    pa = sub.add_parser("path", help="print the folder a dataset lives in")
    pa.add_argument("name")
    pa.set_defaults(func=run_path)

    info = sub.add_parser("info", help="load a dataset (name or path) and print its counts and consistency problems")
    info.add_argument("name", help="registered name, or a dataset file / folder")
    info.set_defaults(func=run_info)


def run_list(args: argparse.Namespace) -> int:
    from metaeval.workflow.datasets import dataset_rows

    rows = [("NAME", "FILES", "CACHED", "CHECKSUMS", "SOURCE")]
    rows += [(r.name, r.files, r.cached, r.checksums, r.source) for r in dataset_rows()]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4])
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    from metaeval.workflow.datasets import fetch_dataset

    report = fetch_dataset(args.name, source=args.source, force=args.force)
    print(f"{report.name} -> {report.directory}")
    for f in report.files:
        print("  " + f.describe())
    if not report.complete:
        missing = [f.filename for f in report.files if f.action != "present" and f.action != "fetched"]
        print(f"  incomplete: {', '.join(missing)} not fetched (give --from a folder holding them)")
    return 0


def run_path(args: argparse.Namespace) -> int:
    from metaeval.workflow.datasets import dataset_path

    print(dataset_path(args.name))
    return 0


def run_info(args: argparse.Namespace) -> int:
    from metaeval.workflow.datasets import dataset_info

    ds = dataset_info(args.name)
    if ds.description:
        print(ds.description)
    for k, v in ds.summary.items():
        print(f"{k}: {v}")
    for f in ds.files:
        ver = {True: "verified", False: "NOT verified (no checksum recorded)", None: "not checked: bundled or loaded by path"}[f.get("verified")]
        print(f"file {f['filename']}: md5 {f['md5']} sha256 {f['sha256']} ({ver})")
    if ds.note:
        print(f"note: {ds.note}")
    problems = ds.problems
    for p in problems[:20]:
        print(f"problem: {p}")
    if len(problems) > 20:
        print(f"... {len(problems) - 20} more problems")
    return 1 if problems else 0
