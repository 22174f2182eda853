"""The column sink's output as Arrow arrays: its lists, or the compiled sink's buffers wrapped without a copy.

``record_batch`` turns a block's column dict (``scan`` kernels'
``columns_from_block``) into a ``pyarrow.RecordBatch`` of the analysis schema
(``fastpgn.schema``): what ``read_arrow``, the converter's Parquet chunks,
``fastpgn.spark`` and ``analyse`` all encode.
"""

from __future__ import annotations

import functools

from fastpgn import schema

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any


def record_batch(columns: dict[str, Any], uci: bool = False, positions: bool = False, fens: bool = False) -> Any:
    """A ``pyarrow.RecordBatch`` of a column dict (the schema's names; their order is kept).

    >>> batch = record_batch({"white": ["Ann", None], "white_elo": [1500, None]})
    >>> batch.schema.field("white_elo").type, batch.column(0).to_pylist()
    (DataType(int16), ['Ann', None])
    """
    pa = schema.require_pyarrow("fastpgn.arrow.record_batch()")
    full = schema.arrow_schema(uci, positions, fens)
    by_name = _fields(uci, positions, fens)
    fields = []
    arrays = []
    for name, values in columns.items():
        field = by_name.get(name)
        if field is None:
            flag = schema.OPTIONAL.get(name)
            raise ValueError(f"no column {name!r} in the schema" + (f" ({name} needs {flag}=True)" if flag else ""))
        fields.append(field)
        arrays.append(_column_array(pa, field, values))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields, metadata=full.metadata))


@functools.cache
def _fields(uci: bool, positions: bool, fens: bool) -> dict[str, Any]:
    """The schema's fields by name."""
    return {field.name: field for field in schema.arrow_schema(uci, positions, fens)}


def _column_array(pa: Any, field: Any, values: Any) -> Any:
    """One column as an Arrow array of the field's type."""
    if isinstance(values, list):
        try:
            return pa.array(values, type=field.type)
        except pa.ArrowInvalid:
            if field.type != pa.list_(pa.float32()):
                raise
            # pyarrow refuses an int that float32 cannot hold exactly (a clock of 4661:00:01): as a double, it
            # rounds, as the compiled sink rounds it
            return pa.array([None if v is None else [None if x is None else float(x) for x in v] for v in values],
                            type=field.type)
    if isinstance(values, pa.Array):
        if values.type != field.type:
            raise TypeError(f"column {field.name} is {values.type}, the schema says {field.type}")
        return values
    if isinstance(values, tuple):
        return _from_buffers(pa, field.type, values)
    raise TypeError(f"column {field.name} must be a list or a pyarrow Array, not {type(values).__name__}")


def _from_buffers(pa: Any, kind: Any, spec: Any) -> Any:
    """An array from the compiled column sink's ``(length, null_count, buffers, children)``, without a copy."""
    length, nulls, buffers, children = spec
    wrapped = [None if b is None else pa.py_buffer(b) for b in buffers]
    if pa.types.is_list(kind) and pa.types.is_struct(kind.value_type):     # the tags: offsets, names, values
        offsets = pa.Array.from_buffers(pa.int32(), length + 1, [None, wrapped[1]])
        pairs = pa.StructArray.from_arrays(
            [_from_buffers(pa, f.type, child) for f, child in zip(kind.value_type, children)],
            fields=list(kind.value_type))
        return pa.ListArray.from_arrays(offsets, pairs, type=kind)
    kids = [_from_buffers(pa, kind.value_type, children[0])] if pa.types.is_list(kind) else None
    return pa.Array.from_buffers(kind, length, wrapped, null_count=nulls, children=kids)


__all__ = ["record_batch"]
