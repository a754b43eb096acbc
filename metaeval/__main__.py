from metaeval.cli import entry

if __name__ == "__main__":  # not when a worker process imports the parent's main module
    entry()
