"""The vocabulary's page of other packages' objects (core/vocabulary.py reads it): the
placement that model, train-state and checkpoint objects keep, as data
(analysis/library.py, docs/library-objects.md). Standard library only.
"""

from __future__ import annotations

# [tool.reshard-lint] library-objects and library-kinds (core/config.py). Keys: a call's
# qualified name (``*``: any run of characters but a dot; ``[A-Z]``: one of those).
# "makes": the call gives an object of that kind, with the fields "given" takes from its
# arguments (a position, a keyword, or both); "reads": the call gives that field of the
# object it is handed ("of"; "item": [i, n], the i-th of an n-tuple); "stores": the call
# puts "value" into that field of the object "into" (one a listed call made). A kind
# "keeps" its fields (a name starting with "@" is no attribute: only calls read it), takes
# ``obj.f = v`` where "assign" says so ("shares": its other attributes hold parts of what
# it keeps, so reading one changes it), and has "methods": "copy" gives a copy with the
# keyword fields replaced; "placed_like" a tree placed as the first given of those
# arguments is (a field of one: "args.item"), an abstract leaf placed by its kind's
# "placement" field.
LIBRARY_OBJECTS: dict[str, dict[str, object]] = {
    "transformers.Flax*.from_pretrained": {"makes": "model-with-params"},
    "transformers.Flax*Model": {"makes": "model-with-params"},
    "transformers.Flax*For*": {"makes": "model-with-params"},
    "flax.training.train_state.TrainState.create": {"makes": "train-state", "given": {"params": "params"}},
    "flax.nnx.merge": {"makes": "nnx-module", "given": {"@state": 1}},
    "flax.nnx.state": {"reads": "@state", "of": 0},
    "flax.nnx.split": {"reads": "@state", "of": 0, "item": [1, 2]},
    "flax.nnx.update": {"stores": "@state", "into": 0, "value": 1},
    "flax.nnx.[A-Z]*": {"makes": "nnx-module"},  # nnx.Linear(...), nnx.Sequential(...) ...
    "orbax.checkpoint.StandardCheckpointer": {"makes": "standard-checkpointer"},
    "orbax.checkpoint.*Checkpointer": {"makes": "checkpointer"},
    "orbax.checkpoint.CheckpointManager": {"makes": "checkpoint-manager"},
    "orbax.checkpoint.args.StandardRestore": {"makes": "restore-args", "given": {"item": [0, "item"]}},
    "jax.ShapeDtypeStruct": {"makes": "abstract-array", "given": {"sharding": "sharding"}},
}
LIBRARY_KINDS: dict[str, dict[str, object]] = {
    "model-with-params": {"keeps": ["params"], "assign": True},
    "train-state": {"keeps": ["params"], "methods": {"replace": "copy"}},
    "nnx-module": {"keeps": ["@state"], "shares": True},
    # StandardCheckpointer.restore(directory, target): StandardRestore(target), whose arrays
    # and sharded ShapeDtypeStructs give the restored arrays' placement.
    "standard-checkpointer": {"methods": {"restore": {"placed_like": [1, "target"]}}},
    "checkpointer": {"methods": {"restore": {"placed_like": ["args.item"]}}},
    "checkpoint-manager": {"methods": {"restore": {"placed_like": ["args.item"]}}},
    "restore-args": {"keeps": ["item"]},
    "abstract-array": {"keeps": ["sharding"], "placement": "sharding"},
}
