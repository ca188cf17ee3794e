#!/usr/bin/env bash
# A venv with requirements.txt (pyoxigraph, owlrl) for compare.py and
# peers.py, made once and kept:
#   make_venv.sh VENV [PYTHON]
# Exits 77 (a skip for CTest) with the reason when it cannot be made:
# python3-venv missing, or PyPI unreachable.
set -uo pipefail
venv=${1:?usage: make_venv.sh VENV [PYTHON]}
python=${2:-python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ -x $venv/bin/python && -x $venv/bin/oxigraph ]] && "$venv/bin/python" -c 'import pyoxigraph' 2>/dev/null; then
    echo "$venv: ready"
    exit 0
fi
rm -rf "$venv"
if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    echo "SKIPPED: $python -m venv failed (Debian: python3-venv)"
    exit 77
fi
# One retry with a short timeout: where PyPI is unreachable (a CI sandbox)
# the skip comes in seconds, not after pip's default five retries.
if ! timeout 300 "$venv/bin/pip" install -q --timeout 10 --retries 1 -r "$here/requirements.txt" 2>"$venv.err"; then
    tail -3 "$venv.err"
    rm -rf "$venv" "$venv.err"
    echo "SKIPPED: pip install -r requirements.txt failed (PyPI unreachable?)"
    exit 77
fi
rm -f "$venv.err"
echo "$venv: made"
