def unzip_pairs(pairs):
    return [[p[0] for p in pairs], [p[1] for p in pairs]]
