"""Versioned prompt templates for the three nugget tasks (and optional relevance grading), and their rendering.

Templates are package data files ``metaeval/prompts/templates/<id>/<version>.yaml`` with the fields
``id, version, task (create|importance|assign|relevance), output (python|json), labels, system, user, reask``.
A template is named ``id@version`` (e.g. ``assign@v1``, ``assign2@v2-json``); its ``sha`` (first 12 hex digits of
the SHA-256 of the file's bytes) goes into every trace with id and version, so a reworded file is visible in
results even when someone forgets to bump the version.

Built-in templates (the wording is metaeval's own, following the method of Pradeep et al. 2025):

=================  ======  ==============================================================================
name               output  what
=================  ======  ==============================================================================
create@v1          python  iterative creation: <=10 documents update a list of <=30 nuggets
create@v2-json     json    same, JSON object ``{"nuggets": [...]}``
importance@v1      python  vital / okay for <=10 nuggets
importance@v2-json json    same, stricter wording, ``{"labels": [...]}``
assign@v1          python  support / partial_support / not_support for <=10 nuggets
assign@v2-json     json    same, stricter wording
assign2@v1         python  two grades: support / not_support
assign2@v2-json    json    two grades, stricter wording
relevance@v1       python  UMBRELA grades 0-3 for <=10 candidate documents (optional first stage)
relevance@v2-json  json    same, ``{"grades": [...]}``
=================  ======  ==============================================================================

Answer, document and query text is *delimited* (``<answer>...</answer>`` etc.) and any of our delimiter tags
inside that text are neutralised (``<`` replaced by ``‹``), so injected text cannot close the block it sits in
(see ``render``).  The prompts tell the model to treat delimited text as data.
"""

from metaeval.prompts.templates_io import (
    DEFAULT_PROMPTS,
    PromptTemplate,
    list_templates,
    load_template,
    neutralize,
)

__all__ = ["DEFAULT_PROMPTS", "PromptTemplate", "list_templates", "load_template", "neutralize"]
