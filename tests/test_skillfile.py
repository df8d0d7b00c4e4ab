"""Finding the bundled skill file: inside a wheel first, else the source checkout's copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from screvi_mcp import skillfile
from screvi_mcp.client.skill import SkillFileUnavailable, load_bundled_skill


@pytest.fixture
def checkout_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "repo" / "SKILL.md"
    copy.parent.mkdir()
    copy.write_text("# From the checkout\n", encoding="utf-8")
    monkeypatch.setattr(skillfile, "CHECKOUT_SKILL_PATH", copy)
    return copy


def test_a_checkout_serves_its_own_copy(checkout_copy: Path) -> None:
    # Outside a wheel there is no `_bundled_skills` inside the package.
    assert skillfile.bundled_skill_path() == checkout_copy
    skill = load_bundled_skill()
    assert (skill.content, skill.origin) == ("# From the checkout\n", "bundled")


def test_the_copy_inside_the_package_wins(
    checkout_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "pkg"
    inside = package / "_bundled_skills" / "screvi" / "SKILL.md"
    inside.parent.mkdir(parents=True)
    inside.write_text("# From the wheel\n", encoding="utf-8")
    monkeypatch.setattr(skillfile.resources, "files", lambda _name: package)
    assert load_bundled_skill().content == "# From the wheel\n"


def test_no_copy_anywhere_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skillfile, "CHECKOUT_SKILL_PATH", tmp_path / "missing.md")
    assert skillfile.bundled_skill_path() is None
    with pytest.raises(SkillFileUnavailable):
        load_bundled_skill()


def test_the_real_checkout_has_a_skill_file_with_front_matter() -> None:
    path = skillfile.bundled_skill_path()
    assert path is not None
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\nname: screvi\ndescription: ")
