"""The response cache on a Ray cluster: one cache actor, pinned to the driver's node, owns the SQLite file.

Without it every actor opened ``cache.path`` on whatever node it landed on (a relative path, too), so each node
kept its own cache, a moved or restarted actor lost its replies, and a rerun on a cluster called the model again.
With it:

* the driver resolves the cache path to an absolute path on *its* filesystem and starts ``CacheActor`` there
  (``NodeAffinitySchedulingStrategy(driver node, soft=False)``, ``num_cpus=0``);
* each judge actor receives a ``RemoteCache`` in place of the path.  ``ChatClient`` awaits its ``aget`` before a
  request and its ``aput`` when the reply arrives (the actor's event loop is never blocked), so every reply
  from every node lands in the driver's one file, and a rerun makes no call for any request already answered,
  wherever the actor that sent it ran.

The key itself is computed in the judge actor (``metaeval.judges.cache.cache_key``); only key and reply travel.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class CacheActor:
    """Ray actor body around one ``ResponseCache`` (sequential: SQLite writes are ~0.1 ms each)."""

    def __init__(self, path: str):
        from metaeval.judges.cache import ResponseCache

        self.cache = ResponseCache(path)

    def get(self, key: str) -> dict[str, Any] | None:
        return self.cache.get(key)

    def put(self, key: str, record: dict[str, Any], **meta: Any) -> None:
        self.cache.put(key, record, **meta)

    def claim(self, key: str, ttl_s: float) -> str:
        return self.cache.claim(key, ttl_s)

    def release(self, key: str) -> None:
        self.cache.release(key)

    def size(self) -> int:
        return len(self.cache)

    def where(self) -> tuple[str, int]:
        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()


class RemoteCache:
    """What a judge actor holds instead of a cache path: ``aget``/``aput`` go to the driver-node cache actor.

    ``get``/``put`` exist for synchronous callers (they block on ``ray.get``); ``ChatClient`` uses the async pair.
    """

    def __init__(self, handle: Any, path: str):
        self.handle = handle
        self.path = path

    async def aget(self, key: str) -> dict[str, Any] | None:
        return await self.handle.get.remote(key)

    async def aput(self, key: str, record: dict[str, Any], **meta: Any) -> None:
        await self.handle.put.remote(key, dict(record), **meta)

    async def aclaim(self, key: str, ttl_s: float) -> str:
        """``ResponseCache.claim`` in the cache actor (the lease holder is that actor's process)."""
        return await self.handle.claim.remote(key, ttl_s)

    async def arelease(self, key: str) -> None:
        await self.handle.release.remote(key)

    def get(self, key: str) -> dict[str, Any] | None:
        import ray

        return ray.get(self.handle.get.remote(key))

    def put(self, key: str, record: dict[str, Any], **meta: Any) -> None:
        import ray

        ray.get(self.handle.put.remote(key, dict(record), **meta))

    def __repr__(self) -> str:
        return f"RemoteCache({self.path!r})"


def start_cache_actor(path: str | os.PathLike) -> tuple[Any, RemoteCache]:
    """Start the cache actor on the driver's node for the (absolute) ``path``; returns (handle, proxy)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    abspath = str(Path(path).expanduser().resolve())
    node = ray.get_runtime_context().get_node_id()
    handle = ray.remote(CacheActor).options(
        num_cpus=0, max_restarts=3, max_task_retries=3,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
    ).remote(abspath)
    return handle, RemoteCache(handle, abspath)
