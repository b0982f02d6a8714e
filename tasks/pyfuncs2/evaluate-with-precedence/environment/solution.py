def evaluate_with_precedence(s):
    """Evaluate the string `s` holding non-negative integers, `+ - * /` and spaces, with `*`
    and `/` done before `+` and `-`, left to right; `/` is integer division rounding toward
    zero. Return the integer; do not use `eval`.
    """
    raise NotImplementedError
