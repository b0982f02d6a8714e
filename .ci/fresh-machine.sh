#!/usr/bin/env bash
# The fresh-machine path (issue 11): what a new user with only Python and git gets. bubblewrap is
# hidden behind a stub that fails (so rsi's probe falls back exactly as on a machine without it),
# the container engine is not named (no RSI_DOCKER_HOST / DOCKER_HOST; .ci/run calls this before any
# service is installed, so no engine socket exists either), and services are not required: a test
# that needs one skips, naming it. Runs the end-to-end, sandbox, verifier and task-check tests.
# Usable locally too: `bash .ci/fresh-machine.sh [extra pytest args]`.
set -euo pipefail
cd "$(dirname "$0")/.."
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
printf '#!/bin/sh\necho "bwrap: hidden by .ci/fresh-machine.sh" >&2\nexit 1\n' >"$stub/bwrap"
chmod +x "$stub/bwrap"
env -u RSI_REQUIRE_SERVICES -u DOCKER_HOST -u RSI_DOCKER_HOST PATH="$stub:$PATH" \
    .venv/bin/pytest -p no:cacheprovider -ra --durations=15 \
    tests/sandbox tests/verifier tests/tasks \
    tests/run/test_e2e_embedded.py tests/run/test_crash_resume.py \
    tests/harness/test_real_model.py tests/generation/test_generation_e2e.py "$@"
