"""`python -m bench`: run every benchmark, print the table, write bench/results/latest.json.

`--tiny` runs each section at toy sizes with few iterations (CI keeps the code working; its
timings mean nothing). `--markdown FILE` re-renders a results JSON as the README's table.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from bench.common import RESULTS_DIR, Settings
from bench.runner import SECTIONS, run
from bench.table import markdown_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--sizes", default="10000,100000", help="library sizes in highlights (default 10000,100000)"
    )
    parser.add_argument("--tiny", action="store_true", help="toy sizes and few iterations (CI)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="directory for the JSON")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated subset of {','.join(SECTIONS)}",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="rebuild the generated libraries in bench/.cache"
    )
    parser.add_argument(
        "--markdown", type=Path, metavar="JSON", help="print a results file as markdown"
    )
    args = parser.parse_args(argv)
    # The SDK's HTTP client logs every request at INFO: thousands of lines under load.
    for name in ("httpx", "httpx2", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)
    if args.markdown:
        print(markdown_table(json.loads(args.markdown.read_text())))
        return 0
    sections = tuple(name.strip() for name in args.sections.split(",") if name.strip())
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    if args.tiny:
        settings = Settings.tiny_run()
    else:
        sizes = tuple(int(size) for size in args.sizes.split(",") if size.strip())
        settings = Settings.full(sizes, use_cache=not args.no_cache)
    run(settings, args.out, sections)
    return 0


if __name__ == "__main__":
    sys.exit(main())
