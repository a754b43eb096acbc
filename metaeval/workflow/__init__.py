"""The workflow layer: what a command does, once, for the command line (``metaeval.commands``) and the Python
API (``metaeval.api``) alike.  The commands parse arguments and print; the API checks keywords and wraps
results; everything in between lives here, one job per module:

* :mod:`~metaeval.workflow.hydra_config` - the configuration, composed with Hydra's public compose API (the only
  place that sees a DictConfig); :mod:`~metaeval.workflow.grid_judges` - the grid's judges and prompts;
  :mod:`~metaeval.workflow.multirun` - ``-m`` as one grid sweep; :mod:`~metaeval.workflow.compose` - the grid's
  cells and the typed settings tree (:mod:`~metaeval.workflow.settings`);
* :mod:`~metaeval.workflow.sweep` - checks, pipeline (label sets), study (every figure), report;
* :mod:`~metaeval.workflow.report` - the report of a results folder and the closing lines;
* :mod:`~metaeval.workflow.compare` - which candidate agrees better with the reference;
* :mod:`~metaeval.workflow.analyze` - the meta-evaluation of candidates against a reference (``analyze``);
* :mod:`~metaeval.workflow.score` - per-answer scores, the leaderboard and their files (``score``);
* :mod:`~metaeval.workflow.calibrate` - the calibration study and applying a fitted model (``calibrate``);
* :mod:`~metaeval.workflow.plan` - the assessor plan and the leaderboard after it (``plan``);
* :mod:`~metaeval.workflow.simulate` - the calibration methods on simulated judges (``simulate``);
* :mod:`~metaeval.workflow.nuggetize` - one judge creating or assigning nuggets in nuggetizer's formats
  (``create``, ``assign``);
* :mod:`~metaeval.workflow.probe` - the prompt-injection probe (``probe``);
* :mod:`~metaeval.workflow.judge_check` - one round trip through a judge, the judges one can name (``judge``);
* :mod:`~metaeval.workflow.datasets` - the dataset registry, fetching, the cache, a dataset's counts (``data``);
* :mod:`~metaeval.workflow.assess` - assessor sheets out and back in (``assess``);
* :mod:`~metaeval.workflow.bench` - the repository's benchmark suite (``bench``);
* :mod:`~metaeval.workflow.config_info` - the config search path and each group's options (``sweep --info``);
* :mod:`~metaeval.workflow.exit_status` - the exit statuses of outcomes that are not errors;
* :mod:`~metaeval.workflow.progress` - the progress display of long stages.

Layering (``tests/unit/test_layering.py``): the workflow imports pipeline, study and report (and what lies below
them); the commands, the CLI and the API import the workflow; nothing below imports the workflow or the commands.
A command imports nothing that does work (study, analysis, pipeline, calibration, planning, judges, prompts,
security, data, assess, scoring, simulation, layout, io) except through the workflow, bar a short list of text
formatters and its options' output checks (``tests/unit/test_workflow_layer.py``: ``ALLOWED``).
"""
