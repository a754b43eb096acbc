"""``analysis.bootstrap`` is capped at ``MAX_BOOTSTRAP`` (issue 25 item 15): the cap itself is accepted (a NIST study
at the cap peaks at 423 MB RSS, docs/benchmarks.md), one more is refused before any work with one line."""

from __future__ import annotations

import pytest

from metaeval.cli import main
from metaeval.workflow.compose import compose_config
from metaeval.errors import ConfigError
from metaeval.study.settings import MAX_BOOTSTRAP


def test_the_cap_itself_is_accepted():
    assert compose_config([f"analysis.bootstrap={MAX_BOOTSTRAP}"])["analysis"]["bootstrap"] == MAX_BOOTSTRAP


def test_one_past_the_cap_is_refused_with_one_line():
    with pytest.raises(ConfigError) as e:
        compose_config([f"analysis.bootstrap={MAX_BOOTSTRAP + 1}"])
    assert str(e.value) == (f"analysis.bootstrap must be an integer >= 0 and <= {MAX_BOOTSTRAP}, "
                            f"got {MAX_BOOTSTRAP + 1}")


def test_the_cli_refuses_it_before_any_work(tmp_path, capsys):
    rc = main(["sweep", "--dry-run", f"results_dir={tmp_path}", f"analysis.bootstrap={MAX_BOOTSTRAP + 1}"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip().splitlines() == [f"metaeval sweep: error: analysis.bootstrap must be an integer >= 0 and <= "
                                        f"{MAX_BOOTSTRAP}, got {MAX_BOOTSTRAP + 1}"]
    assert not any(tmp_path.iterdir())  # nothing written
