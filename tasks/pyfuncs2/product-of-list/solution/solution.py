def product_of_list(xs):
    result = 1
    for x in xs:
        result *= x
    return result
