def to_words(n):
    """Write the integer `n` (0 to 999) in English words, lower case: 0 -> 'zero', 15 ->
    'fifteen', 42 -> 'forty-two', 300 -> 'three hundred', 118 -> 'one hundred eighteen' (no
    'and'; tens and units joined by a hyphen).
    """
    raise NotImplementedError
