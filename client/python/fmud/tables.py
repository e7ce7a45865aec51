"""tables: values read from fmud as NumPy arrays where NumPy is installed, lists otherwise.

DESIGN: a get() answers a Reading (one value per name, at one time) and
a subscription's samples gather into Rows (one row per point, one column
per name). With NumPy each column is an array of the dtype its values
fit without loss: bool for Booleans, int64 (uint64 past it) for integers,
float64 for numbers, and object for anything else (strings, bytes, array
variables, a column that mixes kinds). Without NumPy they are lists.
"""

try:
    import numpy
except ImportError:         # NumPy is optional: lists then
    numpy = None

INT64_MIN, INT64_MAX, UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1


def _dtype(values):
    """The dtype that holds every value without loss, or object."""
    kinds = {type(v) for v in values}
    if not kinds:
        return "float64"
    if kinds == {bool}:
        return "bool"
    if kinds == {int}:
        if all(INT64_MIN <= v <= INT64_MAX for v in values):
            return "int64"
        if all(0 <= v <= UINT64_MAX for v in values):
            return "uint64"
        return object
    if kinds <= {int, float} and all(not isinstance(v, int) or abs(v) <= 1 << 53 for v in values):
        return "float64"
    return object


def column(values):
    """values (a list) as a 1-D NumPy array of the dtype they fit, or the list itself."""
    if numpy is None:
        return list(values)
    dt = _dtype(values)
    if dt is object:
        a = numpy.empty(len(values), dtype=object)
        for i, v in enumerate(values):
            a[i] = v
        return a
    return numpy.array(values, dtype=dt)


class Reading:
    """A get()'s answer: ``time``, ``names`` and ``values`` (in the order asked).

    ``reading["mass1.x1"]`` is one value by name, ``reading[0]`` by position.
    """

    __slots__ = ("time", "names", "values")

    def __init__(self, time, names, values):
        self.time = time
        self.names = list(names)
        self.values = column(values)

    def __len__(self):
        return len(self.names)

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.values[self.names.index(key)]
        return self.values[key]

    def as_dict(self):
        """{name: value}."""
        return dict(zip(self.names, self.values))

    def __repr__(self):
        return "Reading(time=%r, %r)" % (self.time, self.as_dict())


class Rows:
    """Samples gathered: ``names``, ``time`` and ``points`` (one per row), ``columns``.

    ``rows["mass1.x1"]`` is one column; ``rows.values`` is the whole table
    (2-D, float64 when every column is numeric, else object; a list of
    rows without NumPy).
    """

    def __init__(self, names, samples):
        self.names = list(names)
        self.time = column([float(s.time) for s in samples])
        self.points = column([s.point for s in samples])
        self.flags = column([s.flags for s in samples])
        cols = [[s.values[i] for s in samples] for i in range(len(self.names))]
        self.columns = {n: column(c) for n, c in zip(self.names, cols)}
        if numpy is None:
            self.values = [list(s.values) for s in samples]
        elif all(self.columns[n].dtype != object for n in self.names):
            self.values = numpy.array([list(s.values) for s in samples],
                                      dtype="float64").reshape(len(samples), len(self.names))
        else:
            self.values = numpy.empty((len(samples), len(self.names)), dtype=object)
            for r, s in enumerate(samples):
                for c, v in enumerate(s.values):
                    self.values[r, c] = v

    def __len__(self):
        return len(self.time)

    def __getitem__(self, name):
        return self.columns[name]

    def to_csv(self, path):
        """Write time and the columns as CSV (the results file's header form)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(",".join(["time"] + [_csv_name(n) for n in self.names]) + "\n")
            for r in range(len(self)):
                cells = [repr(float(self.time[r]))]
                cells += [_csv_cell(self.columns[n][r]) for n in self.names]
                f.write(",".join(cells) + "\n")

    def __repr__(self):
        return "Rows(%d rows, names=%r)" % (len(self), self.names)


def _csv_name(name):
    return '"%s"' % name.replace('"', '""') if any(c in name for c in ',"\n') else name


def _csv_cell(v):
    if hasattr(v, "item") and not hasattr(v, "__len__"):
        v = v.item()
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return repr(v)
    return _csv_name(str(v))
