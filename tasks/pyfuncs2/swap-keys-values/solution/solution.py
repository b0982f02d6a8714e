def swap_keys_values(d):
    return {value: key for key, value in d.items()}
