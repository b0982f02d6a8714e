def cooldown_schedule(tasks, n):
    """`tasks` lists task names (strings), each taking one unit of time, to be run in any
    order. Between two runs of the same name there must be at least `n` other units (other
    tasks or idle units). Return the fewest units needed to run them all, idle units
    included (0 for no tasks).
    """
    raise NotImplementedError
