def bills_for_amount(amount):
    counts = []
    for bill in (20, 10, 5, 1):
        counts.append(amount // bill)
        amount %= bill
    return counts
