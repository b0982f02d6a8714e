"""Public check: report.txt exists and holds just one whole number, the format the instruction asks for.

It says nothing about whether the number is right; the hidden verifier decides that.
"""

import re
import sys
from pathlib import Path

report = Path("report.txt")
if not report.is_file():
    sys.exit("report.txt is missing")
text = report.read_text(encoding="utf-8", errors="replace").strip()
if not re.fullmatch(r"[0-9]+", text):
    sys.exit(f"report.txt should hold just one whole number, not {text[:80]!r}")
print(f"ok: report.txt holds one number ({text})")
