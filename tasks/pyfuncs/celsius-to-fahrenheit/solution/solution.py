def c_to_f(celsius):
    return celsius * 9 / 5 + 32
