def evaluate_expression(s):
    """Evaluate the string `s`: non-negative integers, `+`, `-` (also a leading or unary
    minus, as in `-(2+3)`), parentheses and spaces. Return the integer result; do not use
    `eval`.
    """
    raise NotImplementedError
