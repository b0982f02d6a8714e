def group_anagrams(words):
    """Group the strings of `words` that are anagrams of each other (same letters, same
    counts). Return a list of groups; each group is sorted alphabetically and the groups are
    sorted by their first word.
    """
    raise NotImplementedError
