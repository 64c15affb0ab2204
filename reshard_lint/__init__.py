"""reshard-lint: static analysis for JAX meshes, shardings and cross-host reshards."""

__version__ = "0.1.0"

# Where the rule pages are published; editors, JSON and SARIF output link to them.
DOCS_URL = "https://github.com/reshard-lint/reshard-lint/blob/main/docs/rules/{code}.md"
