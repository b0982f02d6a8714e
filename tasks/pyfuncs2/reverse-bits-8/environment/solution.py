def reverse_bits_8(n):
    """`n` is an integer from 0 to 255. Return the number whose 8-bit binary form is that of
    `n` reversed (1 = `00000001` becomes `10000000` = 128).
    """
    raise NotImplementedError
