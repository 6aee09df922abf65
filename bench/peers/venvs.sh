#!/usr/bin/env bash
# Makes (or refreshes) the peers' virtual environments for `make bench-peers`:
# bench/peers/.venv-NAME from bench/peers/NAME/requirements.txt, made again
# when the requirements changed. One venv a peer, as their pins conflict.
set -euo pipefail
cd "$(dirname "$0")"
python="${PYTHON:-python3}"
for name in openai_temporal langgraph adk; do
  venv=".venv-$name"
  if ! cmp -s "$name/requirements.txt" "$venv/requirements.txt" 2>/dev/null; then
    echo "bench-peers: installing $name into bench/peers/$venv" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$name/requirements.txt"
    cp "$name/requirements.txt" "$venv/requirements.txt"
  fi
done
