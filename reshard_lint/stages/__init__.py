"""The stages before the analysis: reading a file's text and Python's tree cheaply to
decide whether, and on how much of the file, the analysis runs (prefilter, gate,
components, slicing, nesting, newer_syntax, scoping, call_counts, prepared), and what a
module's tree says of where its code runs (runtime_facts)."""
