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


def run_check(args: argparse.Namespace) -> int:
    from metaeval.workflow.judge_check import build_for_check, round_trip

    built = build_for_check(args.name, config_dirs=args.config_dir or (), prompt=args.prompt, base_url=args.base_url)
    judge = built.judge
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
    print(f"setup:    {built.setup_s * 1000:.0f} ms")
    trip = round_trip(judge)
    res = trip.result
    print(f"round trip: assign {trip.n_nuggets} nuggets -> {[x.value for x in res.labels]} ({res.status}"
          f"{', ' + res.reason if res.reason else ''})")
    print(f"latency:  {trip.wall_s * 1000:.0f} ms")
    for tr in res.traces:
        print(f"  call: model={tr.model} latency={tr.latency_s * 1000:.0f} ms retries={tr.retries} reask={tr.reask} "
              f"tokens={tr.input_tokens}/{tr.output_tokens} cost=${tr.cost_usd:.6f}" + (f" error={tr.error}" if tr.error else ""))
    return 0 if res.status != "failed" else 1


def run_list(args: argparse.Namespace) -> int:
    from metaeval.workflow.judge_check import list_judges

    listing = list_judges(args.config_dir or ())
    print("judge configs (use as judge=NAME, judge check NAME, probe --judge NAME):")
    for name, path, spec, exc in listing.configs:
        if exc is not None:
            print(f"  {name:16s} error: {exc}  ({path})")
            continue
        what = f"{spec.kind}" + (f" {spec.deployment.backend}:{spec.deployment.model}" if spec.deployment else "")
        key = f" key ${spec.key_env}" if spec.key_env else ""
        print(f"  {name:16s} {what}{key}  stages={','.join(spec.capabilities)}  ({path})")
    print("registry (judge kinds):")
    for name, target in listing.kinds.items():
        print(f"  {name:16s} {target}")
    print("prompts:")
    for name, t in listing.prompts:
        print(f"  {name:20s} task={t.task:10s} output={t.output:6s} sha={t.sha}")
    return 0
