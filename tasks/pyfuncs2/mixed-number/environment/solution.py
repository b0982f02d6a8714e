def mixed_number(num, den):
    """Write the fraction `num / den` (`num >= 0`, `den > 0`) as a mixed number string: the
    whole part, a space and the remaining proper fraction in lowest terms (`(7, 2)` gives
    `'3 1/2'`). Leave out the whole part when it is 0 (`'1/3'`) and the fraction when it is
    0 (`'4'`); zero gives `'0'`.
    """
    raise NotImplementedError
