def mask_card(s):
    return "#" * max(len(s) - 4, 0) + s[-4:] if len(s) > 4 else s
