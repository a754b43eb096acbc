from metaeval.cli import entry

entry()
