def top_of_tree(parent):
    """The dict `parent` maps each child's name to its parent's name. Return the sorted list
    of the names that are someone's parent but nobody's child (the roots).
    """
    raise NotImplementedError
