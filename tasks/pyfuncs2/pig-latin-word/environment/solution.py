def pig_latin_word(word):
    """Translate the non-empty lower-case word `word` to Pig Latin: if it starts with a
    vowel `a e i o u`, add `'way'` at the end; otherwise move its first letter to the end
    and add `'ay'`.
    """
    raise NotImplementedError
