# shellcheck shell=bash
# Headless Chromium (Debian's `chromium`) for the ui task kind's judge (rsi/verifier/ui/, tests/verifier/test_ui_judge.py)
# and the report's browser tests (tests/report/): they open
# the HTML reports and drive them over the DevTools protocol (websocket-client, in the dev extra).
# Sourced by .ci/run (as root, after apt-get update): never `exit`, idempotent (apt skips an
# installed package). Exports RSI_CHROMIUM, the binary the tests launch.
apt-get install -y -qq --no-install-recommends chromium >/dev/null
RSI_CHROMIUM="$(command -v chromium)"
export RSI_CHROMIUM
# A smoke check here names the problem in the CI log before any test runs (e.g. a missing library).
"$RSI_CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --dump-dom about:blank >/dev/null 2>&1 \
    || echo "50-chromium: $RSI_CHROMIUM failed to start headless" >&2
