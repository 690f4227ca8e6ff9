# Static types for arena_tui/logs/levelscan.py, compiled by setup.py as arena_tui.logs._levelscan
# (this file is named for the build): the scanner runs as C.
# Every index the scanner reads is checked against the length first (tests/test_levelscan.py
# holds the Python and compiled scanners to the same answers), so setup.py turns Cython's
# bounds and negative-index checks off for this module.
cimport cython

cdef Py_ssize_t _QUOTE, _MINUS, _DOT, _ZERO, _NINE, _ONE
cdef long long _E8_INT, _WHOLE_MAX, _BIG
# the literals a level is cut at and the arrays' seed: C statics, not module-dict lookups
cdef bytes _OPEN_PX, _SZ, _N, _OPEN_N, _PX
cdef object _ZEROS, _NONE

@cython.locals(k=Py_ssize_t, j=Py_ssize_t)
cdef Py_ssize_t _literal(bytes raw, Py_ssize_t i, Py_ssize_t n, bytes lit)

@cython.locals(start=Py_ssize_t)
cdef Py_ssize_t _decimal(bytes raw, Py_ssize_t i, Py_ssize_t n)

@cython.locals(neg=bint, whole=cython.longlong, frac=cython.longlong, places=int,
               value=cython.longlong)
cdef long long _e8_at(bytes raw, Py_ssize_t i, Py_ssize_t end)

@cython.locals(end=Py_ssize_t)
cdef Py_ssize_t _integer(bytes raw, Py_ssize_t i, Py_ssize_t n)

@cython.locals(neg=bint, value=cython.longlong)
cdef long long _int_at(bytes raw, Py_ssize_t i, Py_ssize_t end)

@cython.locals(px_at=Py_ssize_t, px_end=Py_ssize_t, sz_at=Py_ssize_t, sz_end=Py_ssize_t,
               n_at=Py_ssize_t, n_end=Py_ssize_t, px=cython.longlong, sz=cython.longlong)
cdef Py_ssize_t _level(bytes raw, Py_ssize_t i, Py_ssize_t n, int form, Py_ssize_t k,
                       long long[:] pxs, long long[:] szs, long long[:] ns)

# the arrays' typed views, taken once a book; k < cap is checked before each write
@cython.locals(i=Py_ssize_t, bids=Py_ssize_t, side=int, k=Py_ssize_t, cap=Py_ssize_t,
               vpx=cython.longlong[:], vsz=cython.longlong[:], vn=cython.longlong[:])
cdef object _scan(bytes raw, Py_ssize_t n, int form, bint numbers)

@cython.locals(n=Py_ssize_t)
cpdef object scan_levels(bytes raw)

@cython.locals(n=Py_ssize_t)
cpdef bint scan_fast_form(bytes raw)
