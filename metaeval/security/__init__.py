"""Security checks that measure, rather than assume: the prompt-injection probe (``injection``)."""
