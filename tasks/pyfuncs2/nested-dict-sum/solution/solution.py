def nested_dict_sum(d):
    return sum(nested_dict_sum(v) if isinstance(v, dict) else v for v in d.values())
