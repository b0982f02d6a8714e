"""Where a run's attempts live on disk: the one place that builds an attempt folder's path.

Every run (a portfolio run, a harvest, an evaluation) lays its attempts out the same way, so the
report, `rsi attempt`, the trajectory export and a resume find them without knowing who ran them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STAGING_PREFIX = ".tmp-"


@dataclass(frozen=True)
class RunLayout:
    """The attempt folders of one run::

        runs/<run id>/
          attempts/
            j0000/                      one folder per job (job index, 4 digits)
              <suite>__<task>/          the task key, "/" written as "__"
                a0/                     one per attempt index: trajectory, final code, verdict
                .tmp-a1-<pid>-<thread>/ an attempt being written; renamed to a1/ only when complete,
                                        so a half-written one is never read, and a resume removes it
          slurm/                        the executor's files (SLURM arrays, their logs)
    """

    run_dir: Path

    @property
    def slurm_dir(self) -> Path:
        return self.run_dir / "slurm"

    def job_dir(self, job_index: int) -> Path:
        return self.run_dir / "attempts" / f"j{job_index:04d}"

    def attempt_dir(self, job_index: int, task_key: str, attempt_index: int) -> Path:
        return self.job_dir(job_index) / task_key.replace("/", "__") / f"a{attempt_index}"

    def task_dirs(self, task: str) -> list[Path]:
        """The task folders of `task` in every job of the run, in job order; `task` is a task key
        (suite/id) or a bare task id (any suite)."""
        name = task.replace("/", "__") if "/" in task else f"*__{task}"
        return sorted(p for p in (self.run_dir / "attempts").glob(f"j*/{name}") if p.is_dir())

    def stale_staging(self, job_index: int) -> list[Path]:
        """Half-written attempt folders of a job (a killed process left them; nothing reads them)."""
        return sorted(self.job_dir(job_index).glob(f"*/{STAGING_PREFIX}*"))


def staging_dir(attempt_dir: Path, writer: str) -> Path:
    """Where `writer` (a process and thread tag) writes `attempt_dir` before renaming it into place."""
    return attempt_dir.parent / f"{STAGING_PREFIX}{attempt_dir.name}-{writer}"


def attempt_dirs(task_dir: Path) -> list[Path]:
    """The attempt folders (a0, a1, ...) of one task folder of a run, by attempt index; half-written
    ones (STAGING_PREFIX) are left out."""
    found = [p for p in task_dir.glob("a*") if p.is_dir() and p.name[1:].isdigit()]
    return sorted(found, key=lambda p: int(p.name[1:]))


def is_task_dir(path: Path) -> bool:
    """Whether `path` is a task folder of a run: runs/<run>/attempts/j<job>/<suite>__<task>/."""
    return (path.is_dir() and "__" in path.name and path.parent.name.startswith("j")
            and path.parent.name[1:].isdigit() and path.parent.parent.name == "attempts")
