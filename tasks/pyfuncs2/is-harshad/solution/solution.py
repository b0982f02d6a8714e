def is_harshad(n):
    return n % sum(int(d) for d in str(n)) == 0
