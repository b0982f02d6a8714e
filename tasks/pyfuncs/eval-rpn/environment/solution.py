def eval_rpn(tokens):
    """Evaluate an arithmetic expression in reverse Polish notation given as a list of string
    tokens: integers (possibly negative, like '-3') and the operators + - * /. Division
    truncates toward zero (so 7 / -2 is -3). Return the integer result.
    """
    raise NotImplementedError
