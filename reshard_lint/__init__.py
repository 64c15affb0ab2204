"""reshard-lint: static analysis for JAX meshes, shardings and cross-host reshards."""

__version__ = "0.1.0"

# Where the rule pages are published ("https://.../{code}.md"); editors, JSON and SARIF
# output link to them. None while the project is hosted nowhere: a link to an address that
# does not answer is worse than none. The pages are generated from the rules, so every
# front end can give them without a link: ``reshard-lint rule CODE`` prints one, SARIF
# carries each in its rule's ``help``, and the language server links the clone's
# docs/rules/CODE.md when it runs from a clone (frontends/lsp_positions.py).
DOCS_URL: str | None = None
