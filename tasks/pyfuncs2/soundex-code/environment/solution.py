def soundex_code(name):
    """Return the American Soundex code of the name `name` (letters only, either case, not
    empty): its first letter in upper case, then digits for the following letters (b f p v
    -> 1; c g j k q s x z -> 2; d t -> 3; l -> 4; m n -> 5; r -> 6). Adjacent letters with
    the same digit count once (including the first letter); vowels a e i o u y separate
    equal digits, while h and w do not; vowels, y, h and w get no digit. Pad with zeros or
    cut to 4 characters.
    """
    raise NotImplementedError
