"""The one registry of run schedulers: name -> class. `RunSpec.scheduler` validates against it.

Light on purpose (no numpy at import): `rsi.run.spec` imports it, and `rsi --help` stays instant.
The simulator's hindsight bound (`rsi.simulate.hindsight_best_rate_first`) is not here: it needs the
true pass rates, which no run has.
"""

from __future__ import annotations

from rsi.scheduler.baselines import (
    BestSingleScheduler,
    ConfigMajorScheduler,
    RandomScheduler,
    RoundRobinScheduler,
)
from rsi.scheduler.tag_mixture import TagMixtureDrawsScheduler, TagMixtureScheduler
from rsi.scheduler.thompson import ThompsonExploreOneScheduler, ThompsonScheduler
from rsi.scheduler.types import Scheduler

DEFAULT = "thompson"

SCHEDULERS: dict[str, type] = {
    "thompson": ThompsonScheduler,
    "thompson-explore-one": ThompsonExploreOneScheduler,
    "thompson-tags": TagMixtureScheduler,
    "thompson-draws": TagMixtureDrawsScheduler,
    "round-robin": RoundRobinScheduler,
    "config-major": ConfigMajorScheduler,
    "random": RandomScheduler,
    "best-single": BestSingleScheduler,
}


def make_scheduler(name: str = DEFAULT) -> Scheduler:
    """A scheduler by name (see SCHEDULERS). Unknown names raise ValueError listing the known ones."""
    try:
        return SCHEDULERS[name]()  # type: ignore[no-any-return]
    except KeyError:
        raise ValueError(f"unknown scheduler {name!r}; known: {', '.join(SCHEDULERS)}") from None


def scheduler_name(name: str) -> str:
    """`name` if it is registered, else ValueError listing the known ones (a pydantic validator)."""
    if name not in SCHEDULERS:
        raise ValueError(f"unknown scheduler {name!r}; known: {', '.join(SCHEDULERS)}")
    return name
