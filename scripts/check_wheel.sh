#!/usr/bin/env bash
# CI: build the sdist and the wheel, install the wheel into a clean virtual environment
# outside the checkout, first alone and then with the `local` extra, and run it as a user
# would (scripts/wheel_smoke.py). Nothing but the package index is used.
set -euo pipefail
cd "$(dirname "$0")/.."
# Nothing may come from the checkout: a PYTHONPATH=src kept from development would let the
# smoke run import the source instead of the installed wheel.
unset PYTHONPATH
repo="$(pwd)"
python="${PYTHON:-$repo/.venv/bin/python}"
work="$(mktemp -d "${TMPDIR:-/tmp}/screvi-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# uv where scripts/test.sh put it beside the project's python: it builds in its own isolated
# environment and installs from its cache, so this check needs nothing of the project's venv
# and runs beside its install. Else `build` and pip (build and hatchling come with the `test`
# extra: --no-isolation, no second download).
uv="$(dirname "$python")/uv"
if [ -x "$uv" ]; then
  build=("$uv" build --quiet --out-dir "$work/dist" .)
else
  build=("$python" -m build --no-isolation --outdir "$work/dist" .)
fi
"${build[@]}" >"$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; echo "wheel check failed: ${build[*]}" >&2; exit 1; }
wheel="$(ls "$work"/dist/*.whl)"
ls "$work"/dist/*.tar.gz >/dev/null

cd "$work"  # outside the checkout: nothing can be imported from src/ by accident
# A venv from the base interpreter, not from the project's venv: nothing of it leaks in.
# Without pip of its own (ensurepip cost 5 s of CPU): the project's uv or pip installs into it.
"$("$python" -c 'import sys; print(sys.base_prefix)')/bin/python3" -m venv --without-pip venv
# pip's --no-compile: byte-compiling every installed module (numpy, onnxruntime, lxml...)
# doubled the install's CPU; the smoke run compiles the few it imports.
if [ -x "$uv" ]; then
  installer=("$uv" pip install -q --python venv/bin/python)
else
  installer=("$python" -m pip --python venv/bin/python install -q --disable-pip-version-check
    --no-compile)
fi
install() {
  "${installer[@]}" "$1" >"$work/pip.log" 2>&1 \
    || { cat "$work/pip.log" >&2; echo "wheel check failed: installing $1" >&2; exit 1; }
}
install "$wheel"
venv/bin/python "$repo/scripts/wheel_smoke.py" base "$work"
install "$wheel[local]"
venv/bin/python "$repo/scripts/wheel_smoke.py" local "$work"
