def phone_keypad_digits(text):
    """Translate the string `text` to the digits of a phone keypad: ABC -> 2, DEF -> 3, GHI
    -> 4, JKL -> 5, MNO -> 6, PQRS -> 7, TUV -> 8, WXYZ -> 9 (letters in either case).
    Digits are kept; every other character (spaces, dashes, ...) is dropped.
    """
    raise NotImplementedError
