"""reshard-lint: static analysis for JAX meshes, shardings and cross-host reshards."""

__version__ = "0.1.0"
