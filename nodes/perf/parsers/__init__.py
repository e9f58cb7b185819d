"""One module per input format. Each exposes ``sniff`` and ``parse`` (see nodes.perf.formats)."""
