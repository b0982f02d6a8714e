def quote_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
