"""Print what decides whether scripts/serve.sh must reinstall: a hash of what pip installs
from pyproject.toml (the build system and the [project] table: dependencies, extras, entry
points), so that editing tool settings (pytest, ruff, mypy) does not force a reinstall."""

import hashlib
import json
import sys
import tomllib
from pathlib import Path

path = Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml")
data = tomllib.loads(path.read_text(encoding="utf-8"))
installed = {"build-system": data.get("build-system"), "project": data.get("project")}
print(hashlib.sha256(json.dumps(installed, sort_keys=True).encode()).hexdigest())
