"""The report's provenance section: the command that made the results folder (from ``overrides.yaml``), the
dataset and its file checksums, prompt templates, package versions, seeds, the git commit and the composed
configuration (collected by :func:`metaeval.report.provenance.collect` from what the study recorded)."""

from __future__ import annotations

from metaeval.report.context import Context, dash
from metaeval.report.model import Detail, Section, Table, Text, fmt
from metaeval.report.provenance import collect


def provenance(ctx: Context) -> Section:
    import json

    prov = collect(ctx.res.summary)
    ctx.data["provenance"] = prov
    ds = prov["dataset"]
    git = prov.get("git")
    command = _command(ctx)
    ctx.data["command"] = command
    blocks: list = [
        Text(f"Command: {command}" if command else "Command: not recorded (no overrides.yaml in the results folder).",
             "pre" if command else "note"),
        Text(f"Experiment {prov['experiment']!s} on dataset {ds['name']!s} ({ds['topics']} topics, {ds['runs']} runs, "
             f"{ds['answers']} answers). Source: {ds.get('source') or '-'}. Git commit: "
             + (f"{git['commit']}{' (uncommitted changes)' if git.get('dirty') else ''}" if git else "not a git checkout")
             + f". Wall time {fmt(prov.get('elapsed_s'), 1)} s. Study run by metaeval {prov['metaeval']} on "
             f"{prov['platform']} at {prov['recorded_at']} (UTC)."),
        Detail("dataset files, prompts, packages, seeds", [
            Table(["file", "md5", "sha256", "size"], [[dash(f["filename"]), dash(f["md5"]), dash(f["sha256"]), dash(f["size"])]
                                                      for f in ds["files"]], "dataset files", [False, False, False, True]),
            Table(["cell", "template", "version", "sha"], [[p["cell"], p["template"], p["version"], p["sha"]] for p in prov["prompts"]]
                  or [["-", "-", "-", "no prompt templates (offline judges)"]], "prompt templates used"),
            Table(["package", "version"], [[k, dash(v)] for k, v in prov["packages"].items()], "package versions (recorded when the study ran)"),
            Table(["seed", "value"], [[k, dash(v)] for k, v in prov["seeds"].items()], "seeds")], open=False),
        Detail("configuration (as composed)", [Text(json.dumps(prov["config"], indent=2, default=str), "pre")], open=False),
    ]
    if prov.get("stopped"):
        blocks.insert(2, Text(f"The sweep stopped early: {prov['stopped']}", "note"))
    return Section("provenance", "Provenance", blocks)


def _command(ctx: Context) -> str | None:
    """``metaeval sweep <overrides>`` from the results folder's ``overrides.yaml`` (the overrides composed into
    config.yaml; options that do not change results, e.g. ``--no-progress``, are not recorded)."""
    import shlex

    path = ctx.res.layout.overrides_yaml
    if not path.exists():
        return None
    try:
        import yaml

        ov = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    except Exception as exc:  # noqa: BLE001 - shown, never hidden
        ctx.unreadable(path, exc)
        return None
    if not isinstance(ov, list):
        return None
    return "metaeval sweep " + " ".join(shlex.quote(str(o)) for o in ov)
