"""The analysis: an abstract interpreter over Python's tree of a module (tree.py), with models of the JAX API.

Laid out as pytype lays out its own: abstract values (values.py, and the device-list
model in devices.py), the interpreter (interpreter.py for statements, expressions.py,
calls.py), and the models of the libraries the source cannot show (models/, one
module per family). Rules read its events (events.py) and per-file facts (context.py);
nothing here imports a rule or a front end.
"""

from .interpreter import Analyzer, iter_events

__all__ = ["Analyzer", "iter_events"]
