def is_mac_address(s):
    for sep in (":", "-"):
        parts = s.split(sep)
        if len(parts) == 6 and all(len(p) == 2 and all(c in "0123456789abcdefABCDEF" for c in p) for p in parts):
            return True
    return False
