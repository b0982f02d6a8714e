def zip_to_dict(keys, values):
    return dict(zip(keys, values))
