"""KEEL's file format: the ``@relation/@attribute/@inputs/@outputs/@data`` files a user downloading from KEEL
gets (:func:`read_keel`, :func:`parse_keel`), and the encoding shared with the header-less bodies of
``shared/datasets/keel`` (:func:`split_fields`, :func:`encode`; :mod:`ccbench_plugins.datasets.keel`).

::

    @relation name
    @attribute a real [0.0, 1.0]        numbers (real, integer, numeric)
    @attribute b {x, y, z}              nominal: one 0/1 column per declared value, in declared order
    @inputs a, b                        the features, in @inputs order (default: all but the output)
    @outputs class                      the class (default: the last attribute)
    @data
    0.5, x, positive

Fields are split on ``,`` and stripped; blank lines and ``%`` comments are skipped. Classes are coded
0..k-1 in the output's declared order (a body: numeric order when every class is a number, ``banana``'s
-1.0, 1.0, else string order), keeping only classes that occur.

Missing values are ``?`` or ``<null>``. The rule (``missing``, as :func:`ccbench.datasets.load_dataset`'s):
``"drop"`` (default; KEEL's own sets are complete-case copies) drops every row with one; ``"impute"`` fills a
number with its column's mean over the rows that have one and a nominal value with the most frequent value
(ties: the first in declared order); ``"category"`` imputes numbers so and codes a missing nominal value as one
more 0/1 column after the declared values. A row whose class is missing is always dropped (nothing to score).
"""

from __future__ import annotations

from pathlib import Path

MISSING_TOKENS = ("?", "<null>")




def _index_of(values, column):
    """Position of each entry of ``column`` in ``values`` (every entry is one of them)."""
    import numpy as np

    values = np.asarray(values)
    order = np.argsort(values, kind="stable")
    return order[np.searchsorted(values[order], column).clip(0, len(values) - 1)]


def _class_order(labels, declared=()):
    """Distinct class strings: ``declared`` order (header format), else numeric order when every class is a
    number, else string order."""
    import numpy as np

    seen = np.unique(labels)
    if declared:
        return np.array([c for c in declared if c in set(seen.tolist())], dtype=seen.dtype)
    try:
        return seen[np.argsort(seen.astype(np.float64), kind="stable")]
    except ValueError:
        return seen


def split_fields(lines, where: str):
    """(rows, columns) array of stripped strings from comma-separated ``lines``, blank lines skipped."""
    import io

    import numpy as np
    import pandas as pd

    from ccbench.datasets import DataParseError

    text = "\n".join(lines)
    if not text.strip():
        raise DataParseError(f"{where}: no data rows")
    try:  # pandas' C reader: no Python loop over rows; every field kept as text; blank lines skipped
        frame = pd.read_csv(io.StringIO(text), header=None, dtype=str, na_filter=False, skipinitialspace=True,
                            skip_blank_lines=True)
    except pd.errors.ParserError as exc:
        raise DataParseError(f"{where}: rows with different field counts ({exc})") from exc
    return np.char.strip(frame.to_numpy(dtype=str))


def _numeric_column(column, gone, where, j):
    import numpy as np

    from ccbench.datasets import DataParseError

    try:
        numbers = np.where(gone, "nan", column).astype(np.float64)
    except ValueError as exc:
        raise DataParseError(f"{where}: feature column {j} is numeric but holds a non-number ({exc})") from exc
    fill = np.nanmean(numbers) if (~gone).any() else 0.0
    return np.where(gone, fill, numbers)[:, None]


def _nominal_columns(column, gone, declared, missing, where, j):
    import numpy as np

    from ccbench.datasets import DataParseError

    declared = tuple(declared) or tuple(np.unique(column[~gone]).tolist())
    unknown = np.setdiff1d(column[~gone], declared)
    if unknown.size:
        raise DataParseError(f"{where}: feature column {j} holds {str(unknown[0])!r}, not one of {declared}")
    codes = _index_of(declared, column)
    if gone.any() and missing == "impute":  # the most frequent value; argmax takes the first on ties
        codes = np.where(gone, int(np.argmax(np.bincount(codes[~gone], minlength=len(declared)))), codes)
    elif gone.any():  # "category": one more column after the declared values
        codes = np.where(gone, len(declared), codes)
    width = len(declared) + int(gone.any() and missing == "category")
    return np.eye(width)[codes]


def encode(fields, kinds, missing: str, where: str, class_values=()):
    """(X, y, classes, meta) from string ``fields`` (class last).

    ``kinds[j]`` is ``None`` for a number, else the tuple of a nominal column's values (``()``: the values
    seen, sorted), one-hot in that order. Missing tokens (:data:`MISSING_TOKENS`) follow ``missing`` (module
    docstring); a row with a missing class is dropped."""
    import numpy as np

    from ccbench.datasets import MISSING_OPTIONS, DataParseError

    if missing not in MISSING_OPTIONS:
        raise ValueError(f"missing={missing!r} is not an option; use one of {', '.join(MISSING_OPTIONS)}")
    if fields.shape[1] != len(kinds) + 1:
        raise DataParseError(f"{where}: rows have {fields.shape[1]} fields, expected {len(kinds)} features "
                             f"and the class")
    absent = np.isin(fields, MISSING_TOKENS)
    keep = ~absent[:, -1] & ~(absent.any(axis=1) & (missing == "drop"))
    fields, absent = fields[keep], absent[keep]
    if not len(fields):
        raise DataParseError(f"{where}: no row left with missing={missing!r}")
    blocks = [_numeric_column(fields[:, j], absent[:, j], where, j) if kind is None
              else _nominal_columns(fields[:, j], absent[:, j], kind, missing, where, j)
              for j, kind in enumerate(kinds)]
    X = np.hstack(blocks) if blocks else np.empty((len(fields), 0))
    labels = fields[:, -1]
    unknown = np.setdiff1d(labels, class_values) if class_values else ()
    if len(unknown):
        raise DataParseError(f"{where}: class {str(unknown[0])!r} is not one of the declared {tuple(class_values)}")
    classes = _class_order(labels, class_values)
    y = _index_of(classes, labels).astype(np.intp)
    meta = {"classes": classes.tolist(), "rows_dropped": int((~keep).sum()), "missing": missing}
    return X.astype(np.float64), y, classes, meta


# -- KEEL's header format -----------------------------------------------------------------------------


def _attribute(rest: str, where: str):
    """(name, values) of an ``@attribute`` line's remainder; values None for real / integer / numeric."""
    from ccbench.datasets import DataParseError

    rest = rest.strip()
    if rest[:1] in ("'", '"'):
        end = rest.index(rest[0], 1)
        name, kind = rest[1:end], rest[end + 1:].strip()
    else:
        cut = min((i for i in (rest.find(" "), rest.find("\t"), rest.find("{")) if i > 0), default=len(rest))
        name, kind = rest[:cut], rest[cut:].strip()
    if kind.startswith("{"):
        if not kind.endswith("}"):
            raise DataParseError(f"{where}: attribute {name!r}: nominal values {kind!r} do not end with '}}'")
        return name, tuple(v.strip().strip("'\"") for v in kind[1:-1].split(",") if v.strip())
    word = kind.split("[")[0].strip().lower()
    if word not in ("real", "integer", "numeric"):
        raise DataParseError(f"{where}: attribute {name!r} has type {word!r}; KEEL's are real, integer, "
                             f"numeric or {{nominal values}}")
    return name, None


def _names(text: str) -> list[str]:
    return [v.strip().strip("'\"") for v in text.split(",") if v.strip()]


def parse_header(lines, where: str = "KEEL file"):
    """``(attributes, inputs, output, first_data_line)`` of a KEEL file's lines: attributes as (name,
    values or None) in file order; inputs and output as attribute positions."""
    from ccbench.datasets import DataParseError

    attributes, inputs, outputs = [], None, None
    for i, line in enumerate(lines):
        text, word = line.strip(), line.strip().split(" ")[0].lower()
        if not text or text.startswith("%") or word == "@relation":
            continue
        if word == "@data":
            names = [a[0] for a in attributes]
            outputs = outputs or names[-1:]
            inputs = inputs or [n for n in names if n not in outputs]
            missing = [n for n in (*inputs, *outputs) if n not in names]
            if missing or len(outputs) != 1:
                raise DataParseError(f"{where}: @inputs/@outputs name {missing or outputs}: need declared "
                                     f"attributes and exactly one output")
            return attributes, [names.index(n) for n in inputs], names.index(outputs[0]), i + 1
        if word == "@attribute":
            attributes.append(_attribute(text[len(word):], where))
        elif word in ("@inputs", "@input"):
            inputs = _names(text[len(word):])
        elif word in ("@outputs", "@output"):
            outputs = _names(text[len(word):])
        else:
            raise DataParseError(f"{where} line {i + 1}: {text[:60]!r} is not a KEEL header line (a header-less "
                                 f"body is read by parse_body, with the manifest's column types)")
    raise DataParseError(f"{where}: no @data line; not a KEEL-format file (a header-less body is read by "
                         f"parse_body with the manifest's column types)")


def parse_keel(text: str, *, missing: str = "drop", where: str = "KEEL file"):
    """(X, y, classes, meta) of a KEEL-format file's ``text``: attribute types from the header, nominal
    attributes one-hot in declared order, classes in the output's declared order, missing values as
    ``missing`` says (module docstring)."""
    import numpy as np

    lines = text.splitlines()
    attributes, inputs, output, start = parse_header(lines, where)
    fields = split_fields(lines[start:], where)
    if fields.shape[1] != len(attributes):
        from ccbench.datasets import DataParseError

        raise DataParseError(f"{where}: rows have {fields.shape[1]} fields, the header declares "
                             f"{len(attributes)} attributes")
    fields = fields[:, [*inputs, output]]
    kinds = [attributes[j][1] for j in inputs]
    X, y, classes, meta = encode(fields, kinds, missing, where, attributes[output][1] or ())
    meta["attributes"] = [attributes[j][0] for j in inputs]
    return X, y, np.asarray(classes), meta


def read_keel(path, *, missing: str = "drop"):
    """:func:`parse_keel` of the file at ``path``."""
    return parse_keel(Path(path).read_text(encoding="utf-8"), missing=missing, where=str(path))
