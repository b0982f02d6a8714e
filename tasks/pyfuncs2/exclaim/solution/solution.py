def exclaim(s):
    return s + "!"
