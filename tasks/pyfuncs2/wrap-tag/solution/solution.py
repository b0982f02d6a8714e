def wrap_tag(s, tag):
    return "<" + tag + ">" + s + "</" + tag + ">"
