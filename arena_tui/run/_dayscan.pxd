# Static types for arena_tui/run/dayscan.py, compiled by setup.py as arena_tui.run._dayscan
# (this file is named for the build): the scan over a day's columns runs as C.
# Cython's bounds checks stay on (a cache's columns are read as they are);
# tests/test_dayscan.py holds the source and the build to the same answers.
cimport cython

cdef int _BOOK, _TRADES, _CTX, _OTHER
cdef bytes _TICK_HEAD, _TICK_TAIL


cdef class DayScan:
    cdef const long long[:] t, off, tr
    cdef const unsigned char[:] kind, blob
    cdef const short[:] coin, nlev
    cdef const int[:] row
    cdef list states
    cdef long long[:] held, saved
    cdef Py_ssize_t ncoins, saved_n
    cdef bint defer_books, defer_ctx, quiet
    cdef public Py_ssize_t nheld, r_lo, r_hi

    @cython.locals(k=int, r=Py_ssize_t, c=Py_ssize_t, n2=Py_ssize_t, states=list)
    cpdef Py_ssize_t scan(self, Py_ssize_t i, Py_ssize_t stop, long long limit,
                          Py_ssize_t row_stop) except -1

    cpdef rewind(self)

    @cython.locals(k=Py_ssize_t, got=list)
    cpdef list take_held(self)

    cdef _hold(self, Py_ssize_t slot, Py_ssize_t i)

    @cython.locals(last=Py_ssize_t)
    cdef bint _holds_book(self, a, Py_ssize_t c, Py_ssize_t i, Py_ssize_t n2) except -1

    @cython.locals(r=Py_ssize_t)
    cdef bint _two_sided(self, Py_ssize_t i)

    @cython.locals(at=Py_ssize_t, end=Py_ssize_t, head=Py_ssize_t, tail=Py_ssize_t, k=Py_ssize_t)
    cdef bint _is_tick(self, Py_ssize_t i)
