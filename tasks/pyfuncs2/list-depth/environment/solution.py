def list_depth(xs):
    """Return the nesting depth of the list `xs`: 1 for a list with no list inside, plus one
    per level of lists inside lists (an empty list has depth 1).
    """
    raise NotImplementedError
