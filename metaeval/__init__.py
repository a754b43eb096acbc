"""metaeval: how far can you trust an LLM judge of RAG answers, and how to correct it.

Import submodules directly (``metaeval.scoring``, ``metaeval.io``, ``metaeval.analysis`` ...); this package
module stays import-light so that ``metaeval --help`` is fast.
"""

__version__ = "0.1.0"
