def center_pad(s, width, fill):
    total = max(0, width - len(s))
    left = total // 2
    return fill * left + s + fill * (total - left)
