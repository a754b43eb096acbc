"""``metaeval judge``: inspect judges.  ``check NAME`` makes one real round trip; ``list`` shows judges and prompts."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judge", help="check a judge or deployment (one round trip) and list judges and prompts",
                       description="Judges create nuggets, label importance and assign nuggets to answers.")
    jsub = p.add_subparsers(dest="judge_command", metavar="ACTION")
    c = jsub.add_parser("check", help="one assignment call through the judge: model, labels, latency (never the key)",
                        description="NAME is a config name (metaeval/conf/judge, ./conf/judge or --config-dir: gpt-4o, "
                        "testserver, ...), a registry name (lexical, embedding, local-llm, ...) or a YAML/JSON judge or "
                        "deployment config file - resolved exactly as `metaeval sweep judge=NAME` resolves it. "
                        "The call bypasses the cache so it really reaches the model.")
    c.add_argument("name", metavar="NAME")
    c.add_argument("--config-dir", action="append", metavar="DIR", help="a config folder overlaying the package's")
    c.add_argument("--prompt", default=None, metavar="ID@VERSION", help="assignment template to use (default: the judge's)")
    c.add_argument("--base-url", default=None, metavar="URL",
                   help="the server to check instead of the judge's deployment.base_url (e.g. http://HOST:8001/v1)")
    c.set_defaults(func=run_check)
    ls = jsub.add_parser("list", help="judge config names, registry names and built-in prompt templates")
    ls.add_argument("--config-dir", action="append", metavar="DIR", help="a config folder overlaying the package's")
    ls.set_defaults(func=run_list)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


_EXAMPLE = {
    "qid": "check-1",
    "query": "why do cats purr",
    "answer": "Cats purr by twitching the muscles of the larynx. They purr when content, and also when hurt.",
    "nuggets": ["Cats purr using muscles of the larynx", "Cats also purr when injured", "Purring lowers blood pressure in owners"],
}


def run_check(args: argparse.Namespace) -> int:
    import time

    from metaeval.judges import SyncJudge, build_judge, check_available, resolve_judge
    from metaeval.judges.catalog import default_config_dirs
    from metaeval.types import Answer, Topic

    spec = resolve_judge(args.name, config_dirs=default_config_dirs(args.config_dir or ()))
    check_available(spec, ("assign",))  # stage, extra and API-key variable: one line before anything is built
    options = {}
    if "cache" in spec.config:
        options["cache"] = None  # a check must reach the model
    if args.prompt:
        options["prompts"] = {**spec.prompts, "assign": args.prompt}
    spec = spec.with_options(**options)
    if args.base_url:
        spec = spec.with_deployment(base_url=args.base_url)
    if spec.deployment is not None and spec.deployment.base_url:
        reachable(spec.deployment.base_url, spec.name)  # a refused connection: one line now, not retries
    t0 = time.perf_counter()
    judge = build_judge(spec)
    setup_s = time.perf_counter() - t0
    info = judge.describe()
    print(f"judge:    {info.get('judge')} ({judge.name})")
    dep = info.get("deployment")
    if dep:
        env = dep.get("api_key_env")
        print(f"backend:  {dep['backend']}")
        print(f"model:    {dep['model']}")
        print(f"base_url: {dep.get('base_url') or '(SDK default or its *_BASE_URL environment variable)'}")
        print(f"key:      {'from $' + env + ' (set)' if env else 'none needed'}")
        print(f"prompts:  {', '.join(v['name'] + ' [' + v['sha'] + ']' for v in info['prompts'].values())}")
    else:
        extra = {k: v for k, v in info.items() if k not in ("judge", "name")}
        print(f"model:    {extra.pop('model', info.get('judge'))}  {extra if extra else ''}".rstrip())
    print(f"setup:    {setup_s * 1000:.0f} ms")
    with SyncJudge(judge) as sj:
        t1 = time.perf_counter()
        res = sj.assign(Topic(_EXAMPLE["qid"], _EXAMPLE["query"]), Answer("check", _EXAMPLE["qid"], _EXAMPLE["answer"]), _EXAMPLE["nuggets"])
        wall = time.perf_counter() - t1
    print(f"round trip: assign {len(_EXAMPLE['nuggets'])} nuggets -> {[x.value for x in res.labels]} ({res.status}"
          f"{', ' + res.reason if res.reason else ''})")
    print(f"latency:  {wall * 1000:.0f} ms")
    for tr in res.traces:
        print(f"  call: model={tr.model} latency={tr.latency_s * 1000:.0f} ms retries={tr.retries} reask={tr.reask} "
              f"tokens={tr.input_tokens}/{tr.output_tokens} cost=${tr.cost_usd:.6f}" + (f" error={tr.error}" if tr.error else ""))
    return 0 if res.status != "failed" else 1


def reachable(url: str, judge: str, timeout_s: float = 3.0) -> None:
    """One TCP connection to ``url``'s host and port: a refused or unresolvable address, or nothing answering within
    ``timeout_s``, is one ``ConfigError`` line naming the URL (the client would spend its retries and backoff on
    it, about 10 s for ``max_retries: 4``, and end with the SDK's bare "Connection error.")."""
    import socket
    from urllib.parse import urlsplit

    from metaeval.errors import ConfigError

    parts = urlsplit(url)
    if not parts.hostname:
        raise ConfigError(f"judge {judge!r}: deployment.base_url {url!r} is not a URL (expected http://HOST:PORT/...)")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout_s):
            pass
    except OSError as exc:
        why = ("connection refused: is the server running?" if isinstance(exc, ConnectionRefusedError)
               else f"{type(exc).__name__}: {exc.strerror or exc}")
        raise ConfigError(f"judge {judge!r}: cannot connect to {url} ({parts.hostname}:{port}): {why} (start it, or "
                          "point the judge elsewhere: judge check NAME --base-url URL; in a sweep "
                          f"judge.{judge}.deployment.base_url=URL)") from None


def run_list(args: argparse.Namespace) -> int:
    from metaeval.judges import JUDGES, resolve_judge
    from metaeval.judges.catalog import default_config_dirs, judge_names
    from metaeval.prompts import list_templates, load_template

    dirs = default_config_dirs(args.config_dir or ())
    print("judge configs (use as judge=NAME, judge check NAME, probe --judge NAME):")
    for name, path in judge_names(dirs).items():
        try:
            spec = resolve_judge(name, config_dirs=dirs)
            what = f"{spec.kind}" + (f" {spec.deployment.backend}:{spec.deployment.model}" if spec.deployment else "")
            key = f" key ${spec.key_env}" if spec.key_env else ""
            print(f"  {name:16s} {what}{key}  stages={','.join(spec.capabilities)}  ({path})")
        except Exception as exc:  # a broken user file is listed with its error, not a traceback
            print(f"  {name:16s} error: {exc}  ({path})")
    print("registry (judge kinds):")
    for name, target in JUDGES.items():
        print(f"  {name:16s} {target}")
    print("prompts:")
    for name in list_templates():
        t = load_template(name)
        print(f"  {name:20s} task={t.task:10s} output={t.output:6s} sha={t.sha}")
    return 0
