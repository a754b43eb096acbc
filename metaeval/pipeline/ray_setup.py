"""Ray for a sweep: start or join a cluster (``init_ray``), ship the driver's package to it
(``cluster_runtime_env``) and hand each actor only the secrets it needs (``_Secrets``, never a runtime_env)."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, Mapping

from metaeval.errors import ConfigError

log = logging.getLogger(__name__)


def _drop_token_auth_notice(record: logging.LogRecord) -> bool:
    """Logging filter: False for Ray's "Token authentication is enabled for this Ray cluster" notice."""
    return "Token authentication is enabled for this Ray cluster" not in record.getMessage()


def init_ray(address: str | None = None, num_cpus: int | None = None, runtime_env: dict[str, Any] | None = None) -> None:
    """Start (or join) Ray.  Local runtimes bind to 127.0.0.1 only.

    ``address``: an existing cluster's GCS address ``HOST:PORT`` (or ``ray://HOST:10001`` with the Ray Client
    extra, ``pip install 'ray[client]'``); ``runtime_env`` ships code to its workers (``cluster_runtime_env``).
    """
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    if not address and "ray" not in sys.modules:
        # A new local cluster: keep Ray's token authentication on, but say so explicitly - with RAY_AUTH_MODE unset
        # Ray enables it anyway and prints a warning on every run (a user's own setting is respected).  Ray reads
        # the variable when it is imported, so it is set only before the first import (after it, the GCS would ask
        # for a token the driver does not send).
        os.environ.setdefault("RAY_AUTH_MODE", "token")
    import ray

    if ray.is_initialized():
        return
    if address:
        if address.startswith("ray://") and not _has_ray_client():  # say what is missing before probing the port
            raise ConfigError(f"runtime.address={address}: ray:// needs the Ray Client (pip install "
                              f"'ray[client]'); or give the cluster's GCS address HOST:PORT")
        host = reachable_address(address)  # an unreachable address: one line within CONNECT_TIMEOUT_S, not minutes
        kwargs: dict[str, Any] = {"address": address, "log_to_driver": False}
        if host in LOOPBACK:  # a cluster on this machine: this driver's node stays on loopback too
            kwargs["_node_ip_address"] = "127.0.0.1"
        if runtime_env:
            kwargs["runtime_env"] = runtime_env
        try:
            ray.init(**kwargs)
        except ValueError as exc:
            if "ray[client]" in str(exc) or "Ray Client" in str(exc):
                raise ConfigError(f"runtime.address={address}: ray:// needs the Ray Client (pip install "
                                  f"'ray[client]'); or give the cluster's GCS address HOST:PORT") from None
            raise
        except ConnectionError as exc:
            raise ConfigError(f"runtime.address={address}: cannot reach a Ray cluster there ({exc})"[:300]) from None
    else:
        # when ray was imported before RAY_AUTH_MODE could be set, Ray still enables token auth and logs a notice
        # on every run: drop that one notice (H6)
        logging.getLogger("ray._private.authentication.authentication_token_setup").addFilter(_drop_token_auth_notice)
        try:
            context = ray.init(num_cpus=num_cpus or 2, include_dashboard=False, _node_ip_address="127.0.0.1",
                               log_to_driver=False, configure_logging=False)
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception when its node times out starting
            raise start_error(exc) from None
        # the session's agents outlive a killed driver by 60 s on their own: a watchdog ends them (ray_reaper)
        from metaeval.pipeline import ray_reaper

        ray_reaper.start(str((getattr(context, "address_info", None) or {}).get("session_dir") or ""))


def _has_ray_client() -> bool:
    """Whether the Ray Client extra (``ray[client]``: grpc) is installed."""
    import importlib.util

    return importlib.util.find_spec("grpc") is not None


#: how long joining a cluster may take to find its GCS port open
CONNECT_TIMEOUT_S = 10.0
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def reachable_address(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """The host of a ``HOST:PORT`` (or ``ray://HOST:PORT``) cluster address after checking that its port accepts
    a TCP connection within ``timeout_s``; ``ConfigError`` (one line) otherwise.  ``auto`` and addresses without a
    port are left to Ray (None)."""
    import socket

    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit() or address == "auto":
        return None
    host = host.strip("[]") or "127.0.0.1"
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        why = f"no answer within {timeout_s:g} s" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc)).lower()
        raise ConfigError(f"runtime.address={address}: cannot reach a Ray cluster there ({why}); start it "
                          "(ray start --head) or fix the address") from None
    return host


def start_error(exc: BaseException) -> ConfigError:
    """One line for a local Ray that did not start (Ray's own bounded wait: "node timed out during startup", an
    overloaded machine), after shutting down what it left."""
    import ray

    try:
        ray.shutdown()
    except Exception:  # noqa: BLE001 - nothing more to clean up
        pass
    load = ""
    try:
        load = f" (load average {os.getloadavg()[0]:.1f})"
    except OSError:  # pragma: no cover
        pass
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return ConfigError(f"runtime=ray_local: Ray did not start{load}: {first}; retry when the machine is less busy, "
                       "or use runtime=serial (no Ray)")


def cluster_runtime_env(ship_package: bool = True, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The job's ``runtime_env`` on a cluster: the driver's own ``metaeval`` package as a ``py_modules`` entry
    (so every node runs the driver's code; third-party dependencies must be installed on the nodes), plus the
    user's ``runtime.runtime_env``.  API keys are NOT put here: Ray's runtime-env agent logs the serialized
    runtime env at INFO on every node; keys travel as actor arguments instead (``_Secrets``)."""
    env: dict[str, Any] = dict(extra or {})
    if ship_package:
        from metaeval.paths import PACKAGE_DIR

        pkg = str(PACKAGE_DIR)
        env["py_modules"] = [*env.get("py_modules", []), pkg]
        env["excludes"] = [*env.get("excludes", []), "__pycache__", "*.pyc"]
    return env


class _Secrets:
    """Environment variables an actor needs (the judge's key variable, ``METAEVAL_OFFLINE``), as an actor argument.

    Never in a runtime_env (logged by Ray's agent) and never printed: ``repr`` shows the names only."""

    def __init__(self, values: Mapping[str, str]):
        self._values = dict(values)

    def apply(self) -> None:
        os.environ.update(self._values)

    def __repr__(self) -> str:
        return f"_Secrets({sorted(self._values)})"


#: environment variables forwarded to cluster actors when set in the driver (besides each judge's key variable)
FORWARDED_ENV = ("METAEVAL_OFFLINE",)
