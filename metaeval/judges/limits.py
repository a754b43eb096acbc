"""Client-side limits: a concurrency cap and requests/tokens-per-minute token buckets.

Each bucket holds up to one minute's allowance (``rpm`` requests, ``tpm`` tokens) and refills continuously at
``allowance / 60`` per second; a request takes 1 request token and its *estimated* tokens (prompt characters / 4
+ ``max_tokens``), and ``settle`` corrects the token bucket with the real usage afterwards.  With no rpm/tpm the
buckets are skipped.  One ``RateLimiter`` belongs to one event loop (the client keeps one per loop).
"""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from typing import AsyncIterator


class TokenBucket:
    def __init__(self, per_minute: float):
        self.capacity = float(per_minute)
        self.rate = float(per_minute) / 60.0
        self.tokens = float(per_minute)
        self.stamp = time.monotonic()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    async def take(self, amount: float) -> float:
        """Wait until ``amount`` (clamped to the capacity) is available and take it; returns seconds waited."""
        amount = min(float(amount), self.capacity)
        waited = 0.0
        async with self._lock:
            while True:
                self._refill()
                if self.tokens >= amount:
                    self.tokens -= amount
                    return waited
                delay = (amount - self.tokens) / self.rate
                waited += delay
                await asyncio.sleep(delay)

    def give_back(self, amount: float) -> None:
        """Correct an estimate: positive gives tokens back, negative takes more (may go below zero)."""
        self._refill()
        self.tokens = min(self.capacity, self.tokens + amount)


class RateLimiter:
    def __init__(self, concurrency: int, rpm: float | None = None, tpm: float | None = None):
        self.semaphore = asyncio.Semaphore(concurrency)
        self.requests = TokenBucket(rpm) if rpm else None
        self.tokens = TokenBucket(tpm) if tpm else None

    @asynccontextmanager
    async def slot(self, est_tokens: int) -> AsyncIterator[float]:
        """Hold one concurrency slot; yields the seconds spent waiting on rpm/tpm."""
        async with self.semaphore:
            waited = 0.0
            if self.requests is not None:
                waited += await self.requests.take(1)
            if self.tokens is not None:
                waited += await self.tokens.take(est_tokens)
            yield waited

    def settle(self, est_tokens: int, used_tokens: int) -> None:
        if self.tokens is not None and used_tokens:
            self.tokens.give_back(est_tokens - used_tokens)
