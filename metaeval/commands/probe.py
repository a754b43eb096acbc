"""``metaeval probe``: measure how far prompt-injection text planted in answers moves a judge's labels.

Assign the dataset's human nuggets to original answers and to the same answers with planted instructions (several
phrasings: override, role play, fake system message, fake </answer>, planted label list, another language, authority
claim), and report per phrasing and overall the share of labels that change (flip rate) and that move toward support
(upward rate).

    metaeval probe --judge NAME_OR_FILE [--prompt assign@v1] [--answers N] [--seed S] [--probe NAME ...]
                   [--base-url URL] [--out FILE.json]
"""

from __future__ import annotations

import argparse

from metaeval.commands.helptext import command_parser


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "probe", __doc__,
                       help="prompt-injection probe: label-flip rate of a judge when answers tell it to mark everything supported")
    p.add_argument("--judge", required=True, metavar="NAME_OR_FILE",
                   help="registry name (lexical, simulated, embedding, local-llm, llm), config name (metaeval/conf/judge or ./conf/judge: "
                   "simulated_fig6, testserver, gpt-4o, ...) or a judge YAML/JSON file")
    p.add_argument("--config-dir", action="append", metavar="DIR", help="a config folder overlaying the package's")
    p.add_argument("--prompt", metavar="TEMPLATE", help="assignment prompt for llm/local-llm judges, e.g. assign@v1 or assign@v2-json")
    p.add_argument("--dataset", default="demo", help="dataset name or path with human nuggets (default demo)")
    p.add_argument("--answers", type=int, default=None, metavar="N", help="probe a seeded sample of N answers (default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the answer sample (default 0)")
    p.add_argument("--probe", action="append", metavar="NAME", help="only these phrasings (repeat; default all)")
    p.add_argument("--base-url", help="override the deployment's base_url (llm judges)")
    p.add_argument("--concurrency", type=int, default=4, help="assignment calls in flight (default 4)")
    p.add_argument("--pairs", action="store_true", help="also write every label pair into the JSON")
    p.add_argument("--out", metavar="FILE.json", help="write the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.out is not None:  # vetted before any call ('' / a folder / /proc / read-only: one line)
        from metaeval.io.outputs import check_output

        check_output(args.out, kind="file")
    from metaeval.commands.assign import failed_stage
    from metaeval.security.injection import format_table  # a text formatter of the probe's document: printing only
    from metaeval.workflow.probe import probe, write_probe

    done = probe(args.judge, config_dirs=args.config_dir or (), base_url=args.base_url, concurrency=args.concurrency,
                 dataset=args.dataset, prompt=args.prompt, n_answers=args.answers,
                 seed=args.seed, probes=args.probe)
    result = done.result
    prompt = result["prompt"]["name"] if result["prompt"] else "none (judge uses no prompt)"
    print(f"judge {result['judge'].get('name', result['judge_kind'])} ({result['judge_kind']}), prompt {prompt}, "
          f"dataset {result['dataset']}, {result['n_answers']} answers")
    print(format_table(result))
    if result["judge_kind"] in ("simulated", "replay"):
        print("note: this judge ignores the answer text, so its flip rate is 0 by construction")
    if args.out:
        write_probe(result, args.out, keep_pairs=args.pairs)
        print(f"wrote {args.out}")
    return failed_stage("probe", done.problem)
