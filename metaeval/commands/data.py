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
    from metaeval.data.fetch import _human, status
    from metaeval.data.registry import REGISTRY

    rows = [("NAME", "FILES", "CACHED", "CHECKSUMS", "SOURCE")]
    for name, entry in REGISTRY.items():
        st = status(name)
        n_have = sum(f.action != "missing" for f in st.files)
        size = sum(f.size for f in st.files)
        if entry.bundled:
            cached = f"bundled ({_human(size)})"
        elif n_have == 0:
            cached = "-"
        elif n_have < len(entry.files):
            cached = f"partial {n_have}/{len(entry.files)} ({_human(size)})"
        else:
            cached = _human(size)
        rows.append((name, str(len(entry.files)), cached, _checksum_status(entry, st), entry.source))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4])
    return 0


def _checksum_status(entry, st) -> str:
    if entry.bundled:
        return "n/a (bundled)"
    n = len(entry.files)
    recorded = sum(f.has_checksum for f in entry.files)
    bad = sum(f.action == "corrupt" for f in st.files)
    if bad:
        return f"MISMATCH ({bad} cached file(s))"
    if recorded == 0:
        return "NOT RECORDED"
    text = "recorded" if recorded == n else f"recorded {recorded}/{n}"
    have = [f for f in st.files if f.action != "missing"]
    if have and all(f.verified for f in have):
        text += ", cache verified"
    return text


def run_fetch(args: argparse.Namespace) -> int:
    from metaeval.data.fetch import fetch

    report = fetch(args.name, source=args.source, force=args.force)
    print(f"{report.name} -> {report.directory}")
    for f in report.files:
        print("  " + f.describe())
    if not report.complete:
        missing = [f.filename for f in report.files if f.action != "present" and f.action != "fetched"]
        print(f"  incomplete: {', '.join(missing)} not fetched (give --from a folder holding them)")
    return 0


def run_path(args: argparse.Namespace) -> int:
    from metaeval.data.fetch import status
    from metaeval.errors import ConfigError

    st = status(args.name)
    if not any(f.action != "missing" for f in st.files):
        raise ConfigError(f"dataset {args.name} is not in the cache ({st.directory}); run: metaeval data fetch {args.name}")
    print(st.directory)
    return 0


def run_info(args: argparse.Namespace) -> int:
    from metaeval.data.dataset import load_dataset

    ds = load_dataset(args.name)
    if ds.description:
        print(ds.description)
    for k, v in ds.summary().items():
        print(f"{k}: {v}")
    for f in ds.provenance.get("files", []):
        ver = {True: "verified", False: "NOT verified (no checksum recorded)", None: "not checked: bundled or loaded by path"}[f.get("verified")]
        print(f"file {f['filename']}: md5 {f['md5']} sha256 {f['sha256']} ({ver})")
    note = ds.coverage_note()
    if note:
        print(f"note: {note}")
    problems = ds.check(coverage=False)  # the runs that skip topics are the one note line above
    for p in problems[:20]:
        print(f"problem: {p}")
    if len(problems) > 20:
        print(f"... {len(problems) - 20} more problems")
    return 1 if problems else 0
