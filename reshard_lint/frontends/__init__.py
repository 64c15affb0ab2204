"""Front ends: what a user runs or reads. The ``reshard-lint`` command (cli), the flake8
plugin, the language server and its positions, ``explain``, ``coverage`` and the output
formats. They drive the engine (engine/); nothing outside this folder imports them."""
