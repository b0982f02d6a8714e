def rows_to_columns(rows):
    if not rows:
        return {}
    return {k: [r[k] for r in rows] for k in rows[0]}
