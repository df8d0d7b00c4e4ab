"""Run an installed screvi-mcp wheel as a user would; called by scripts/check_wheel.sh.

Run it with the Python of a clean virtual environment where the wheel is installed, from a
folder outside the checkout, as `python wheel_smoke.py base|local WORKDIR`:

- `base` (the wheel alone): `--help`; a hosted stdio server answers `initialize` and
  `tools/list`; embedded mode refuses to start with one line naming the `local` extra.
- `local` (with the extra): an embedded stdio server answers `initialize`, `tools/list`,
  creates a highlight, finds it by meaning, and serves the bundled skill file.

Every wait is bounded (`TIMEOUT_SECONDS`); the hosted base URL is a closed loopback port, so
nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TIMEOUT_SECONDS = 60
# A new highlight is found by keywords at once and by meaning once the embedding queue has
# reached it (milliseconds when idle; longer while the model first loads on a busy machine).
EMBEDDING_WAIT_SECONDS = 30


def expected_tools() -> int:
    """How many tools the installed wheel declares (its own list, not a number kept here)."""
    from screvi_mcp.server.app import all_tool_specs

    return len(all_tool_specs())


def fail(message: str) -> None:
    sys.exit(f"wheel check failed: {message}")


def command() -> list[str]:
    script = Path(sys.executable).with_name("screvi-mcp")
    if not script.is_file():
        fail(f"the wheel installed no screvi-mcp command next to {sys.executable}")
    return [str(script)]


def clean_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SCREVI_")}
    env.update(extra)
    return env


class StdioSession:
    """A raw JSON-RPC conversation with `screvi-mcp` over stdio, one line per message."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.next_id = 1

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()  # bounded by the watchdog in run_session
        if not line:
            fail(f"{method}: the server closed stdout; stderr: {self.stderr_tail()}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            fail(f"{method}: {answer['error']}")
        return answer["result"]  # type: ignore[no-any-return]

    def notify(self, method: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.process.stdin.flush()

    def stderr_tail(self) -> str:
        self.process.kill()
        _, err = self.process.communicate(timeout=TIMEOUT_SECONDS)
        return err.strip()[-2000:]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            fail("the server did not exit when stdin closed")


def start_session(argv: list[str], env: dict[str, str]) -> StdioSession:
    import threading

    session = StdioSession(argv, env)
    watchdog = threading.Timer(TIMEOUT_SECONDS * 3, session.process.kill)
    watchdog.daemon = True
    watchdog.start()
    init = session.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "wheel-check", "version": "0"},
        },
    )
    if init["serverInfo"]["name"] == "":
        fail("initialize: no server name")
    session.notify("notifications/initialized")
    tools = session.request("tools/list")["tools"]
    if len(tools) != expected_tools():
        fail(f"tools/list: {len(tools)} tools, expected {expected_tools()}")
    return session


def call_tool(session: StdioSession, name: str, arguments: dict[str, Any]) -> str:
    result = session.request("tools/call", {"name": name, "arguments": arguments})
    text = "\n".join(part.get("text", "") for part in result["content"])
    if result.get("isError"):
        fail(f"{name}: {text}")
    return text


def check_help() -> None:
    done = subprocess.run(
        [*command(), "--help"], capture_output=True, text=True, timeout=TIMEOUT_SECONDS
    )
    if done.returncode != 0 or "SCREVI_API_KEY" not in done.stdout:
        fail(f"--help: exit {done.returncode}: {done.stderr.strip()}")


def check_bundled_skill() -> None:
    from screvi_mcp.skillfile import bundled_skill_path

    path = bundled_skill_path()
    if path is None or "site-packages" not in str(path):
        fail(f"the skill file is not bundled in the wheel (found {path})")
    if not path.read_text(encoding="utf-8").startswith("---\nname: screvi"):
        fail(f"{path} is not the skill file")


def check_base(workdir: Path) -> None:
    check_help()
    check_bundled_skill()
    hosted = clean_env(
        SCREVI_API_KEY="sk_live_wheelcheck", SCREVI_BASE_URL="http://127.0.0.1:9/api/v1"
    )
    start_session(command(), hosted).close()
    refused = subprocess.run(
        [*command(), "--library", str(workdir / "library.sqlite3")],
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
    )
    lines = refused.stderr.strip().splitlines()
    if refused.returncode != 2 or len(lines) != 1 or "screvi-mcp[local]" not in lines[0]:
        fail(f"embedded mode without the extra: exit {refused.returncode}: {refused.stderr}")


def check_local(workdir: Path) -> None:
    check_help()
    check_bundled_skill()
    library = workdir / "library.sqlite3"
    # The wheel venv has no all-mpnet-base-v2: without this the server would start installing
    # it (400 MB from PyPI) in the background during a smoke check that lasts seconds.
    env = clean_env(SCREVI_AUTO_INSTALL_MODEL="0")
    session = start_session([*command(), "--library", str(library)], env)
    call_tool(
        session,
        "create_highlight",
        {"content": "The heart has its reasons which reason knows nothing of."},
    )
    deadline = time.monotonic() + EMBEDDING_WAIT_SECONDS
    while True:
        found = call_tool(
            session,
            "search_highlights",
            {"query": "feelings that logic cannot understand", "min_relevance": 0.3},
        )
        if "heart has its reasons" in found:
            break
        if time.monotonic() > deadline:
            fail(
                "search_highlights did not find the highlight by meaning within "
                f"{EMBEDDING_WAIT_SECONDS} s: {found}"
            )
        time.sleep(0.5)
    skill = session.request("resources/read", {"uri": "screvi://skill.md"})["contents"][0]
    if "name: screvi" not in skill.get("text", ""):
        fail("resources/read screvi://skill.md: not the skill file")
    session.close()


def main() -> None:
    mode, workdir = sys.argv[1], Path(sys.argv[2])
    {"base": check_base, "local": check_local}[mode](workdir)
    print(f"wheel check ({mode}): ok", file=sys.stderr)


if __name__ == "__main__":
    main()
