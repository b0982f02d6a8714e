def strip_html_tags(s):
    out = []
    i = 0
    while i < len(s):
        if s[i] == "<":
            j = s.find(">", i)
            if j >= 0:
                i = j + 1
                continue
        out.append(s[i])
        i += 1
    return "".join(out)
