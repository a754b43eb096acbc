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
* :mod:`~metaeval.workflow.progress` - the progress display of long stages.

Layering (``tests/unit/test_layering.py``): the workflow imports pipeline, study and report (and what lies below
them); the commands, the CLI and the API import the workflow; nothing below imports the workflow or the commands.
"""
