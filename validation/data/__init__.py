"""Reference tables of the source papers (CSV) and their catalog; read them with
:mod:`validation.reference`."""
