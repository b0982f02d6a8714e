def account_balance(start, moves):
    """An account starts at `start`. `moves` is a list of `[kind, amount]` with `kind`
    `'deposit'` or `'withdraw'` and a positive amount. Apply them in order and return the
    final balance; a withdrawal larger than the balance at that moment is refused (skipped).
    """
    raise NotImplementedError
