"""Helpers of the rules, not rules: what several rules share (crossing) and parts of one
rule kept in their own module (its examples, one of its cases). rules/__init__.py finds
the rules as the ``rsh*`` modules of rules/ itself, so nothing here is taken for a rule."""
