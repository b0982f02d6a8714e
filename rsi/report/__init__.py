"""Reports people read in a browser: the run report and the lineage report, each one offline HTML file.

    records.py      typed records a report is made of (pure data)
    extract.py      store rows -> RunReport (pure)
    transcripts.py  trajectory files -> Transcripts, packed into lazily parsed pages
    page.py         RunReport -> the run report's HTML (assets/report.js draws matrix, viewer, search)
    lineage.py      generations, adapters, contract diffs -> the lineage report (records, then HTML)
    write.py        the edges: read the store / workspace, write the file atomically

`write_report` and `write_lineage_report` are what the CLI and the orchestrator call.
"""

from __future__ import annotations

from rsi.report.write import write_lineage_report, write_report

__all__ = ["write_lineage_report", "write_report"]
