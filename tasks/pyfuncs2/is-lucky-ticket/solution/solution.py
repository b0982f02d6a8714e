def is_lucky_ticket(ticket):
    if len(ticket) != 6 or not all(c in "0123456789" for c in ticket):
        return False
    return sum(map(int, ticket[:3])) == sum(map(int, ticket[3:]))
