def chain_of_command(boss, name):
    """The dict `boss` maps an employee's name to their manager's name; the top person is
    not a key. Return the list starting with `name` followed by each manager above, up to
    the top person (just `[name]` when `name` has no manager). There are no cycles.
    """
    raise NotImplementedError
