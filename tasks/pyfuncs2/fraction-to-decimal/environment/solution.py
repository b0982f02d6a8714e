def fraction_to_decimal(num, den):
    """Return the exact decimal expansion of `num / den` (integers, `den != 0`) as a string;
    if the fraction part repeats, put the repeating digits in parentheses (`1/3` gives
    `'0.(3)'`, `1/6` gives `'0.1(6)'`, `1/2` gives `'0.5'`, `4/2` gives `'2'`). A negative
    result starts with `'-'`; zero is `'0'`.
    """
    raise NotImplementedError
