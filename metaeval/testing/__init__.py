"""Test helpers that are part of the package: a wire-compatible OpenAI/Anthropic chat server (``server``) and
the rule that answers metaeval's prompts (``rules``).  Used by tests, benchmarks and `metaeval judge check`."""
