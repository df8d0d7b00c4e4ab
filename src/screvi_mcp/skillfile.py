"""Where the bundled agent skill file lives, in a wheel and in a source checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SKILL_RELATIVE = Path("screvi") / "SKILL.md"


def bundled_skill_path() -> Path | None:
    """The skill file shipped with the package, or None when it is absent."""
    packaged = resources.files("screvi_mcp") / "_bundled_skills" / "screvi" / "SKILL.md"
    if packaged.is_file():
        return Path(str(packaged))
    # An editable install or a source checkout: the repository's own skills/ folder.
    checkout = Path(__file__).resolve().parents[2] / "skills" / SKILL_RELATIVE
    return checkout if checkout.is_file() else None


def read_bundled_skill() -> str | None:
    path = bundled_skill_path()
    return None if path is None else path.read_text(encoding="utf-8")
