"""The rule table `check` reads before it starts workers comes from the rules' source.

Importing the rules imports libcst, which `check`'s gate workers must never hold; the
table read from the source has to be the table the imported rules give, field for field.
"""

from __future__ import annotations

import subprocess
import sys

from reshard_lint.rules.catalog import static_table
from reshard_lint.engine.runner import _imported_table


def test_static_table_equals_the_imported_rules() -> None:
    assert static_table() == _imported_table()


def test_rule_table_without_a_cache_leaves_libcst_unimported() -> None:
    code = ("import sys\nfrom reshard_lint.engine.runner import rule_table\n"
            "t = rule_table(None)\nprint(len(t), 'libcst' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(len(_imported_table())), "False"]
