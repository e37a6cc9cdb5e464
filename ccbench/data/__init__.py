"""Data: the files behind the data sets and what corrupts supervision on purpose.

Owns the UCI parsers (:mod:`._uci`: one per set, with the parsing notes of
``shared/datasets/README.md``), the manifest of the 24 UCI sets (``MANIFEST.tsv``: file names, sizes,
sha256) and fetching and verifying files against it (:mod:`._files`), CSV and OpenML tables
(:mod:`._tables`), and the noise injectors (:mod:`.noise`: label noise before drawing, constraint
flips after). It imports only the plugin API's ``ccbench.constraints`` (noise acts on a
``Constraints``); ``ccbench.datasets`` (``Dataset``, ``load_dataset``, ``fetch_dataset``, suites) is the
public face that plugins and users import, and reads the files through this room. Nothing here runs
a sweep or writes a report.
"""
