"""Toy plugins defined outside the package, one file each (``tests/unit/test_plugins_toy.py`` uses them)."""
