def longest_repeated_substring(s):
    """Return the longest substring that occurs at least twice in the string `s` (the
    occurrences may overlap: `'aaaa'` gives `'aaa'`). If several have that length, return
    the one whose first occurrence comes first; return `''` if no character repeats.
    """
    raise NotImplementedError
