"""The reporter's parts: one view of the findings, rendered as Markdown, HTML with SVG charts, and exports.

Everything here is deterministic and offline: the report is complete without a model. A model may
add a clearly marked narrative (``narrative``), never replace a computed number.
"""
