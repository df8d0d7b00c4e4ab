"""The README, `--help` and the skill file promise only what the code has.

Every `--flag` the README and docs/configuration.md show for `screvi-mcp` exists in its
argument parser; every environment variable they name is read somewhere in the code, and every
`SCREVI_*` variable the code reads is in docs/configuration.md and in `screvi-mcp --help`.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from screvi_mcp.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
USER_DOCS = README + CONFIGURATION
SKILL = (ROOT / "skills" / "screvi" / "SKILL.md").read_text(encoding="utf-8")
ENV_VAR = re.compile(r"\b(SCREVI_[A-Z_]+|PORT)\b")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]+)")
# Flags in the docs that belong to other programs: `claude mcp add`, pip, npm, uvx, the Inspector,
# and the benchmark runner (checked against its own parser below).
OTHER_PROGRAMS_FLAGS = {
    "--transport",
    "--no-deps",
    "--prefix",
    "--cli",
    "--config",
    "--from",
    "--index-url",
}


def screvi_flags(parser: argparse.ArgumentParser) -> set[str]:
    flags: set[str] = set()
    for action in parser._actions:
        flags.update(option for option in action.option_strings if option.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                flags |= screvi_flags(sub)
    return flags


def bench_flags() -> set[str]:
    # `python -m bench` and the sections that run alone (`python -m bench.mirror_sync`).
    text = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "bench").glob("*.py"))
    return set(re.findall(r'add_argument\(\s*"(--[a-z-]+)"', text))


def code_text() -> str:
    files = [*(ROOT / "src").rglob("*.py"), *(ROOT / "scripts").glob("*")]
    files += [*(ROOT / "bench").glob("*.py"), *(ROOT / "tests").rglob("*.py")]
    return "\n".join(
        path.read_text(encoding="utf-8")
        for path in files
        if path.is_file() and path.name != Path(__file__).name
    )


def test_every_flag_in_the_readme_exists() -> None:
    documented = set(FLAG.findall(USER_DOCS))
    known = screvi_flags(build_parser()) | bench_flags() | OTHER_PROGRAMS_FLAGS
    missing = sorted(documented - known)
    assert not missing, f"the README shows flags the code does not have: {missing}"


def test_every_environment_variable_in_the_readme_is_read_by_the_code() -> None:
    code = code_text()
    documented = set(ENV_VAR.findall(USER_DOCS))
    spellings = ('"{}', "${{{}", "${}")  # a string literal, or a shell variable
    missing = sorted(
        name
        for name in documented
        if not any(spelling.format(name) in code for spelling in spellings)
    )
    assert not missing, f"the README names variables nothing reads: {missing}"


def test_every_variable_the_code_reads_is_documented() -> None:
    source = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "src").rglob("*.py"))
    read = set(re.findall(r'"(SCREVI_[A-Z_]+)"', source))
    help_text = build_parser().format_help()
    assert read, "found no environment variables in src/: the pattern is stale"
    assert not sorted(read - set(ENV_VAR.findall(CONFIGURATION))), "not in docs/configuration.md"
    assert not sorted(name for name in read if name not in help_text), "missing from --help"
    assert "PORT" in CONFIGURATION and "${PORT" in (ROOT / "scripts" / "serve.sh").read_text()


def test_the_readme_links_only_to_files_in_the_repository() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if target.startswith(("http://", "https://")):
            continue
        assert (ROOT / target).exists(), f"the README links to {target}, which does not exist"
        assert (ROOT / target).resolve().is_relative_to(ROOT), f"{target} is outside the repo"


def test_the_skill_file_speaks_to_mcp_agents_too() -> None:
    """Agents read it through screvi://skill.md: it names real tools, and REST spellings
    (paths, `q=`, response fields) appear only in [brackets] beside the tool's words."""
    from screvi_mcp.server.docs import tool_table

    tools = {row.split("`")[1] for row in tool_table().splitlines() if row.startswith("| `")}
    verbs = ("search_", "list_", "get_", "create_", "update_", "delete_", "add_", "remove_")
    verbs += ("save_", "read_")
    named = {word for word in re.findall(r"`([a-z_]+)`", SKILL) if word.startswith(verbs)}
    assert len(named) >= 8 and named <= tools, sorted(named - tools)
    body = SKILL.split("---", 2)[2]
    outside = re.sub(r"\[[^\]]*\]", "", body)
    for rest_only in (
        "GET /",
        "POST /",
        "PATCH",
        "?q=",
        "content_offset",
        "content_truncated",
        "Retry-After",
        "cascade=true",
        "`fields`",
    ):
        assert rest_only not in outside, f"{rest_only!r} is taught outside REST brackets"
    assert "screvi.embedded" not in SKILL  # the in-process address is no place to visit


def test_defaults_in_help_match_the_code() -> None:
    from screvi_mcp.client.deadline import DEFAULT_CALL_DEADLINE
    from screvi_mcp.client.ratelimit import DEFAULT_MAX_RATE_WAIT

    help_text = " ".join(build_parser().format_help().split())
    assert f"all (default {DEFAULT_CALL_DEADLINE:g})" in help_text
    assert f"[rate_limited] (default {DEFAULT_MAX_RATE_WAIT:g})" in help_text
