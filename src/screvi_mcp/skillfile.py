"""Where the bundled agent skill file lives, in a wheel and in a source checkout.

One answer for everyone who needs the file: the embedded library serves it at the API root,
and the client falls back to it when the API's copy is out of reach.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SKILL_RELATIVE = Path("screvi") / "SKILL.md"
# An editable install or a source checkout has no `_bundled_skills`: the repo's skills/ serves.
CHECKOUT_SKILL_PATH = Path(__file__).resolve().parents[2] / "skills" / SKILL_RELATIVE


def bundled_skill_path() -> Path | None:
    """The skill file shipped with the package, or None when it is absent."""
    packaged = resources.files("screvi_mcp") / "_bundled_skills" / "screvi" / "SKILL.md"
    if packaged.is_file():
        return Path(str(packaged))
    return CHECKOUT_SKILL_PATH if CHECKOUT_SKILL_PATH.is_file() else None
