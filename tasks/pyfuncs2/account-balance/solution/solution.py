def account_balance(start, moves):
    balance = start
    for kind, amount in moves:
        if kind == "deposit":
            balance += amount
        elif amount <= balance:
            balance -= amount
    return balance
