#!/usr/bin/env bash
# Hidden verifier: the expected count comes from the pristine copy in tests/, never from the
# working directory's app.log (the agent may have changed that one).
set -u
expected=$(awk '$2 == "ERROR"' tests/app.log | wc -l | tr -d ' ')
if [ ! -f report.txt ]; then
    echo "report.txt is missing"
    exit 1
fi
got=$(tr -d '[:space:]' < report.txt)
if [ "$got" != "$expected" ]; then
    echo "report.txt says '$got', expected $expected"
    exit 1
fi
echo "ok: $got error records"
