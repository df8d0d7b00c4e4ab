"""Print the `test` extra's requirements (pyproject.toml) for the names given, one a line:
scripts/test.sh installs the wheel check's builders first without writing their versions
twice."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def main(names: list[str]) -> int:
    extra = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]["test"]
    found = [r for r in extra if re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0] in names]
    if len(found) != len(names):
        print(f"not all of {names} are in the test extra: {found}", file=sys.stderr)
        return 1
    print("\n".join(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
