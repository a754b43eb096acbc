"""Hydra's sweep syntax as ONE grid sweep: ``-m judge=a,b strategy=x,y`` becomes ``grid.judges=[a,b]
grid.strategies=[x,y]`` (``multirun_overrides``), and a top-level choice that a grid would ignore is an error
(``ignored_choices``).  Overrides are parsed with Hydra's ``OverridesParser`` (``hydra.core.override_parser``)."""

from __future__ import annotations

from typing import Any, Sequence

from metaeval.errors import ConfigError
from metaeval.workflow.hydra_config import one_line

#: group -> grid key: what ``-m`` may sweep over in one grid sweep
SWEEPABLE: dict[str, str] = {"judge": "judges", "prompt": "prompts", "strategy": "strategies"}

def multirun_overrides(overrides: Sequence[str]) -> list[str]:
    """``judge=a,b`` / ``prompt=...`` / ``strategy=...`` (Hydra's ``-m`` syntax, also ``choice(a,b)``; a single
    value too: an axis of one) become ``grid.judges=[a,b]`` ... so the whole product runs as ONE grid sweep
    (shared jobs run once).  Any other swept key is an error (one sweep has one set of settings), and so is a
    ``-m`` that names no axis at all."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
    except HydraException as exc:
        raise ConfigError(f"config: {one_line(exc)}") from None
    out: list[str] = []
    swept: dict[str, list[str]] = {}
    for raw, ov in zip(overrides, parsed):
        key = ov.key_or_group
        if ov.is_sweep_override():
            if key not in SWEEPABLE:
                raise ConfigError(f"-m: only {', '.join(SWEEPABLE)} can be swept in one grid sweep, got {raw!r} "
                                  "(run one sweep per setting, each with its own name=)")
            swept[key] = [str(v) for v in ov.sweep_string_iterator()]
        elif key in SWEEPABLE and not raw.lstrip("+~").startswith(f"{key}.") and ov.value() is not None:
            swept[key] = [str(ov.value())]  # a single value: an axis of one (as meant), not the default grid
        else:
            out.append(raw)
    for key, values in swept.items():  # `-m judge=` would run the default cell, not an axis the user typed
        if not [v for v in values if v.strip()]:
            raise ConfigError(f"-m {key}=: an empty axis; name at least one {key} (e.g. -m {key}=a,b)")
    if not swept:
        raise ConfigError(f"-m: nothing to sweep; name the axes, e.g. -m judge=lexical,lexical_strict "
                          f"strategy=human_auto (axes: {', '.join(SWEEPABLE)})")
    for group in SWEEPABLE:  # an unswept axis keeps its single top-level choice
        if group not in swept:
            out.append(f"grid.{SWEEPABLE[group]}=null")
    for group, values in swept.items():
        out.append(f"grid.{SWEEPABLE[group]}=[{','.join(values)}]")
    # exactly the product asked for (no default grid's optional judges); ++ because a grid file may lack the key
    # (grid=single has only judges, prompts, strategies: a plain override was "not a setting", issue 32)
    out.append("++grid.optional_judges=[]")
    return out


def ignored_choices(overrides: Sequence[str], grid: Any, grid_choice: str) -> None:
    """A top-level ``judge=X`` / ``prompt=X`` / ``strategy=X`` while the chosen grid lists that axis would change
    nothing (the grid's list wins): one line saying what to type instead."""
    for raw in overrides:
        key, _, value = raw.partition("=")
        key = key.lstrip("+~")
        axis = SWEEPABLE.get(key)
        if axis is None or not getattr(grid, axis):
            continue
        listed = ", ".join(map(str, getattr(grid, axis)))
        raise ConfigError(f"{raw} has no effect: grid {grid_choice} sweeps grid.{axis}=[{listed}]; for one cell use "
                          f"grid=single {raw}, for a grid of your own -m {key}={value},... or grid.{axis}=[{value}]")


