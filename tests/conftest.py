"""Settings every test run shares.

The English search model defaults to all-mpnet-base-v2 where its wheels are installed
(scripts/test.sh installs them). It costs about 5x MiniLM's CPU per text, so tests that are
not about the model keep the light MiniLM, through the setting a user would use; tests of the
model choice set or unset it themselves (tests/local/search/test_mpnet.py). Subprocesses
inherit it.
"""

from __future__ import annotations

import os

os.environ.setdefault("SCREVI_ENGLISH_MODEL", "minilm")
