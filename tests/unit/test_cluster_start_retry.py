"""``LoopbackCluster`` retries a failed ``ray start`` on fresh ports (a port found free can be taken by another
process before the node binds it); checked with a stand-in ``ray`` executable, no Ray processes involved."""

from __future__ import annotations

import stat

import metaeval.testing.cluster as cluster_mod
from metaeval.testing.cluster import LoopbackCluster


def _fake_ray(tmp_path, fail_first: int):
    """A ``ray`` that fails its first ``fail_first`` calls (like a port clash) and then succeeds; logs its args."""
    script = tmp_path / "ray"
    script.write_text(f"""#!/bin/sh
n=$(cat {tmp_path}/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > {tmp_path}/count
echo "$@" >> {tmp_path}/calls
if [ $n -le {fail_first} ]; then echo "Failed to start: port is already in use"; exit 1; fi
exit 0
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_head_start_is_retried_on_a_new_port(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster_mod, "RAY", _fake_ray(tmp_path, fail_first=1))
    c = LoopbackCluster(tmp_path)
    first = c.port
    c.start()
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 3  # head fails, head again, worker
    assert f"--port={first}" in calls[0] and f"--port={c.port}" in calls[1] and c.port != first
    assert f"--address=127.0.0.1:{c.port}" in calls[2]
    assert (tmp_path / "head.attempt1.log").exists()
    ports = []
    for line in calls:
        tok = line.split()
        for flag, value in zip(tok, tok[1:]):
            if flag.endswith("-port"):
                ports.append(value)
            elif flag == "--worker-port-list":
                ports += value.split(",")
        ports += [t.split("=", 1)[1] for t in tok if t.startswith("--port=")]
    assert len(ports) == 3 * 18 + 2 and len(ports) == len(set(ports))  # no port handed out twice


def test_gives_up_after_the_attempts(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster_mod, "RAY", _fake_ray(tmp_path, fail_first=99))
    try:
        LoopbackCluster(tmp_path).start()
    except RuntimeError as exc:
        assert "attempt 3" in str(exc) and "already in use" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected RuntimeError")
