"""metaeval benchmarks: scripts that print figures (speed targets live here, never in timed tests)."""
