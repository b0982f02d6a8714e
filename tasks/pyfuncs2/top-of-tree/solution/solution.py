def top_of_tree(parent):
    return sorted(set(parent.values()) - set(parent))
