"""The sweep pipeline: strategies, job specs, the results store, stages and executors.

Data flow (DESIGN.md): dataset -> grid of (judge deployment x prompt version x strategy) cells -> frozen,
content-hashed jobs (already-done jobs are skipped) -> executor (asyncio or Ray actors) -> judge client ->
results store -> label sets per cell -> scoring, analysis, calibration.
"""
