def list_depth(xs):
    return 1 + max((list_depth(x) for x in xs if isinstance(x, list)), default=0)
