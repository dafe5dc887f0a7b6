#!/usr/bin/env bash
# A wheel that stands alone: build the sdist and the wheel, install the wheel (not the checkout) into a
# clean virtual environment, and run the installed `shuffledp --version`, `shuffledp --help` and the
# README's "A short tour" snippet there, from a directory outside the checkout.  What a user who
# installs with pip (not make) gets.  Usage: .ci/wheel_check.sh  (PYTHON: the builder's python).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
py=${PYTHON:-$repo/.venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "wheel_check: building sdist and wheel"
"$py" -m build --outdir "$work/dist" "$repo" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/shuffledp-*.whl)
sdist=$(ls "$work"/dist/shuffledp-*.tar.gz)
# the package's data files travel with it (py.typed: the type hints are part of the API)
# (listings captured first: `grep -q` closing a pipe early would fail the lister under pipefail)
wheel_files=$("$py" -m zipfile -l "$wheel")
sdist_files=$(tar -tzf "$sdist")
grep -q "shuffledp/py.typed" <<<"$wheel_files" || { echo "py.typed missing from $wheel"; exit 1; }
grep -q "src/shuffledp/py.typed" <<<"$sdist_files" || { echo "py.typed missing from $sdist"; exit 1; }
# the PIC services' viewer templates and Alembic migrations (read at run time, not imported by name)
for f in shuffledp/service/templates/round.html shuffledp/service/migrations/env.py shuffledp/service/migrations/versions/0001_initial.py; do
  grep -q "$f" <<<"$wheel_files" || { echo "$f missing from $wheel"; exit 1; }
done

echo "wheel_check: installing $(basename "$wheel") into a clean virtual environment"
"$py" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$wheel"

cd "$work"  # nothing may be imported from the checkout
"$work/venv/bin/python" - "$repo/README.md" >"$work/tour.py" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("## A short tour", 1)[1]
print(re.search(r"```python\n(.*?)```", section, re.S).group(1))
PY
installed=$("$work/venv/bin/python" -c "import shuffledp, pathlib; print(pathlib.Path(shuffledp.__file__).parent)")
case "$installed" in "$work/venv/"*) ;; *) echo "shuffledp imported from $installed, not the wheel"; exit 1;; esac
"$work/venv/bin/shuffledp" --version
"$work/venv/bin/shuffledp" --help >/dev/null
"$work/venv/bin/shuffledp" serve --help >/dev/null
"$work/venv/bin/python" "$work/tour.py"
echo "wheel_check: ok ($(basename "$wheel"), $(basename "$sdist"))"
