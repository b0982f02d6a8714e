"""The scheduler: a pure, seeded policy that proposes a run's next job from what happened so far.

No I/O, no clock, no global randomness: the same request gives the same proposal, so the orchestrator,
the simulator (rsi.simulate) and tests drive it directly.

    from rsi.scheduler import Budget, ConfigOption, ScheduleRequest, TaskOption, make_scheduler

    scheduler = make_scheduler("thompson")  # the default; names in SCHEDULERS
    request = ScheduleRequest(
        configs=[ConfigOption("3f2a...", "baseline"), ...],
        tasks=[TaskOption("pyfuncs/add", "train", ("math",)), ...],
        history=[("3f2a...", "pyfuncs/add", False), ...],   # counted attempts (AttemptFact), any order
        budget=Budget(attempts=450),                       # what is LEFT (None = unlimited)
        seed=7, job_index=12, job_size=8,
    )
    proposal = scheduler.propose(request)               # JobProposal | None (None = stop)
    proposal.config_hash, proposal.task_keys, proposal.attempts_per_task, proposal.reason

Every scheduler stops (returns None) when every target task is covered (target = the request's
`split`, train by default), when the budget cannot pay for one more attempt, or when no configuration
may try any open task again (`max_tries_per_task`); it never proposes a covered task unless
`include_covered=True`. A job is one configuration and a batch of at most `job_size` tasks, each
attempted `attempts_per_task` times: the chronological jobs of the Macaron report.

Modules: `types` (the records), `common` (shared bookkeeping), `ability` + `thompson` (the default, and
`thompson-explore-one`), `tag_mixture` (`thompson-tags`, `thompson-draws`: the per-tag specialist model,
the default before),
`baselines` (`round-robin`, `config-major`, `random`, `best-single`), `registry` (name -> class).
"""

from rsi.scheduler.baselines import (
    BestSingleScheduler,
    ConfigMajorScheduler,
    RandomScheduler,
    RoundRobinScheduler,
)
from rsi.scheduler.registry import DEFAULT, SCHEDULERS, make_scheduler, scheduler_name
from rsi.scheduler.tag_mixture import TagMixtureDrawsScheduler, TagMixtureScheduler
from rsi.scheduler.thompson import ThompsonExploreOneScheduler, ThompsonScheduler
from rsi.scheduler.types import (
    AttemptFact,
    Budget,
    ConfigOption,
    JobProposal,
    Scheduler,
    ScheduleRequest,
    TaskOption,
)

__all__ = [
    "DEFAULT", "SCHEDULERS", "AttemptFact", "BestSingleScheduler", "Budget", "ConfigMajorScheduler", "ConfigOption",
    "JobProposal", "RandomScheduler", "RoundRobinScheduler", "ScheduleRequest", "Scheduler", "TagMixtureDrawsScheduler",
    "TagMixtureScheduler", "TaskOption", "ThompsonExploreOneScheduler", "ThompsonScheduler", "make_scheduler", "scheduler_name",
]
