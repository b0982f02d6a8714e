def upsert_by_id(records, updates):
    """`records` and `updates` are lists of dicts, each with an `'id'`. Apply each update in
    order: if a record with the same id exists, its fields are updated with the update's
    fields (new fields added, shared ones replaced); otherwise the update is added at the
    end as a new record. Return the new list; the inputs are not changed.
    """
    raise NotImplementedError
