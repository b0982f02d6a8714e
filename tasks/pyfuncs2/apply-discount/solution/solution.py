def apply_discount(price, percent):
    return price * (100 - percent) / 100
