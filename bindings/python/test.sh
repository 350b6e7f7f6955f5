#!/usr/bin/env bash
# Builds the Python package into a virtual environment (target/pyenv) and runs its tests:
#   bindings/python/test.sh [pytest arguments]
# Installs maturin, pytest, Scrapy and the redis client from PyPI, builds the extension with
# the dev profile (quick to compile; see the root Cargo.toml), builds the `bloomkit` CLI for the
# cross-language tests unless BLOOMKIT_CLI names one, then runs pytest. No test collected
# counts as a failure. Tools run as `python -m ...`: the scripts of a virtual environment that
# was copied elsewhere still name the original's interpreter, and would install there.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/pyenv
if [ ! -x "$venv/bin/python" ]; then
  if ! "${PYTHON:-python3}" -m venv "$venv"; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      rm -rf "$venv"
      "${PYTHON:-python3}" -m venv "$venv"
    else
      echo "bindings/python/test.sh: cannot create a virtual environment (python3-venv?)" >&2
      exit 1
    fi
  fi
fi
export PATH="$PWD/$venv/bin:$PATH"
python -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" pytest scrapy redis
# The CLI for the cross-language tests: BLOOMKIT_CLI when set (scripts/test sets it to the one
# its `cargo test` built), else built here.
if [ -z "${BLOOMKIT_CLI:-}" ]; then
  cargo build -q -p bloomkit-cli
  export BLOOMKIT_CLI="$PWD/target/debug/bloomkit"
fi
MATURIN_PEP517_ARGS="--profile dev" python -m pip install -q --disable-pip-version-check --no-deps \
  --no-build-isolation --force-reinstall ./bindings/python
status=0
python -m pytest -q bindings/python/tests "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "bindings/python/test.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
