from math import factorial


def kth_digit_permutation(n, k):
    digits = [str(d) for d in range(1, n + 1)]
    k -= 1
    out = []
    while digits:
        block = factorial(len(digits) - 1)
        index, k = divmod(k, block)
        out.append(digits.pop(index))
    return "".join(out)
