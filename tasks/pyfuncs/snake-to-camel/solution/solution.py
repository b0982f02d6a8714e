def snake_to_camel(name):
    parts = [p for p in name.split('_') if p]
    if not parts:
        return ''
    return parts[0].lower() + ''.join(p[:1].upper() + p[1:].lower() for p in parts[1:])
