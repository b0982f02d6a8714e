def parse_csv_line(line):
    fields, field, quoted, i = [], '', False, 0
    while i < len(line):
        c = line[i]
        if quoted:
            if c == '"':
                if i + 1 < len(line) and line[i + 1] == '"':
                    field += '"'
                    i += 1
                else:
                    quoted = False
            else:
                field += c
        elif c == '"':
            quoted = True
        elif c == ',':
            fields.append(field)
            field = ''
        else:
            field += c
        i += 1
    fields.append(field)
    return fields
