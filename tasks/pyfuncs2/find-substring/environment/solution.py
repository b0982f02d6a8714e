def find_substring(s, sub):
    """Search `s` from the left for the text `sub` and give the index at which its first
    match begins (case-sensitive); `-1` when there is no match.
    """
    raise NotImplementedError
