# Static types for engine/core.py when compiled (setup.py): the engine is a C struct of
# Python objects (exact integers however large), so the per-input path reads its own
# fields and the markets' (engine/state.pxd) without a dictionary look-up. Every field
# stays public: the rules (orders, fills, scoring, snapshot) and a shell read them as before.
cimport cython

from engine cimport fills
from engine.state cimport AssetState


cdef class Engine:
    cdef public object season, rules, next_oid, t, over, last_mark
    cdef public dict assets, by_coin, accounts, open_orders
    cdef public list _heap, _out, applied_prints
    cdef public object _next_funding, _next_fee, _next_mark, _next_due
    cdef public object books_checked, record_prints

    cpdef list apply(self, line)

    cpdef schedule(self, at, priority, oid)

    cdef _refresh_due(self)

    cdef _run_due(self, t)

    cdef _run_one(self, at, priority, oid)

    @cython.locals(a=AssetState)
    cdef _book(self, data, t)

    @cython.locals(a=AssetState, by_coin=dict, memo=dict)
    cdef _trades(self, msg, t)

    cdef bint _print(self, AssetState a, t, px, sz, time, tid) except -1

    # the columns as typed views (fills.PrintColumns, taken once a day): a print read is
    # a C load, a call converts nothing
    @cython.locals(first=Py_ssize_t, end=Py_ssize_t, stop=Py_ssize_t, at=cython.longlong)
    cpdef Py_ssize_t apply_quiet_prints(
        self, fills.PrintColumns cols, Py_ssize_t lo, Py_ssize_t hi
    ) except -1

    @cython.locals(a=AssetState)
    cdef _ctx(self, data)

    cdef _arena(self, msg, t)

