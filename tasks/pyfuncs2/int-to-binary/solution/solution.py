def int_to_binary(n):
    if n < 0:
        return "-" + bin(-n)[2:]
    return bin(n)[2:]
