"""exit_quickly: the exit status, atexit handlers, logging and open files survive skipping the interpreter's teardown;
a live worker thread gets the normal exit; the console command and ``python -m metaeval`` use it."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run_script(tmp_path, body: str) -> subprocess.CompletedProcess:
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    return subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=60)


def test_status_atexit_logging_and_unclosed_files_are_kept(tmp_path):
    res = run_script(tmp_path, """
        import atexit, logging, sys
        from pathlib import Path
        from metaeval.quick_exit import exit_quickly

        out = Path(sys.argv[1])
        fh = open(out / "left-open.txt", "w")          # never closed: only finalization would flush it
        fh.write("x" * 100)
        bfh = open(out / "left-open.bin", "wb")
        bfh.write(b"y" * 100)
        atexit.register(lambda: (out / "atexit.txt").write_text("ran"))
        log = logging.getLogger("t")
        handler = logging.FileHandler(out / "log.txt")
        log.addHandler(handler)
        log.warning("the last line")
        print("to stdout", end="")                      # no newline: still buffered
        exit_quickly(3)
        """)
    assert res.returncode == 3, res.stderr
    assert res.stdout == "to stdout"
    assert (tmp_path / "left-open.txt").read_text() == "x" * 100
    assert (tmp_path / "left-open.bin").read_bytes() == b"y" * 100
    assert (tmp_path / "atexit.txt").read_text() == "ran"
    assert (tmp_path / "log.txt").read_text() == "the last line\n"


def test_an_open_sqlite_connection_is_closed_so_the_database_file_alone_holds_its_rows(tmp_path):
    """A write-ahead-log database holds new rows in ``-wal`` until a checkpoint; closing the connection (what
    finalization does) checkpoints them.  A copy of the database file alone must read every row."""
    import shutil
    import sqlite3

    res = run_script(tmp_path, """
        import sqlite3, sys
        from metaeval.quick_exit import exit_quickly

        conn = sqlite3.connect(sys.argv[1] + "/db.sqlite", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(100)])
        exit_quickly(0)                                  # the connection is never closed by the script
        """)
    assert res.returncode == 0, res.stderr
    shutil.copy(tmp_path / "db.sqlite", tmp_path / "alone.sqlite")
    with sqlite3.connect(tmp_path / "alone.sqlite") as copy:
        assert copy.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 100


def test_a_running_worker_thread_gets_the_normal_exit(tmp_path):
    res = run_script(tmp_path, """
        import sys, threading, time
        from pathlib import Path
        from metaeval.quick_exit import exit_quickly

        def work():
            time.sleep(0.3)
            Path(sys.argv[1], "thread.txt").write_text("finished")

        threading.Thread(target=work).start()          # not a daemon: a normal exit waits for it
        exit_quickly(None)
        """)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "thread.txt").read_text() == "finished"


def test_the_command_line_entry_points_use_it():
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    scripts = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["metaeval"] == "metaeval.cli:entry"
    assert "entry()" in (root / "metaeval" / "__main__.py").read_text(encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "metaeval", "sweep", "not-an-override"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2 and "error" in res.stderr  # main's status comes through the quick exit
