"""What every part shares: the diagnostic type, configuration, noqa, fixes and the
writer, the result cache, reading sources, qualified names, the collector's pause.
Nothing here imports the stages, the analysis, the project layer, the rules or the
engine."""
