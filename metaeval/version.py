"""The package version (core: modules that record it, such as the study's reuse key, read it from here rather than
from the package facade, which would pull in the Python API and so every layer)."""

__version__ = "0.1.0"
