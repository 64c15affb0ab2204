"""The engine and what runs it: one file through the stages, the analysis and the rules
(engine.py), many files with discovery, the cache and worker processes (runner.py,
pipeline.py). The front ends call it."""
