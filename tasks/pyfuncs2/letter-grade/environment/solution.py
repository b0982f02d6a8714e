def letter_grade(score):
    """Return the letter grade of the score `score` (0-100): `'A'` for 90 or more, `'B'` for
    80 or more, `'C'` for 70 or more, `'D'` for 60 or more, else `'F'`.
    """
    raise NotImplementedError
