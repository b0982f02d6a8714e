def topological_order(deps):
    """`deps` maps each task name to the list of tasks it depends on (every name appears as
    a key). Return an order in which every task comes after its dependencies, choosing the
    alphabetically smallest ready task at each step; return `None` if there is a cycle.
    """
    raise NotImplementedError
