# Static types for arena_tui/logs/daycols.py, compiled by setup.py as arena_tui.logs._daycols
# (this file is named for the build): a day's lines go into its cache's columns as C, each
# column a typed field (no lookup by name a line), each line's path a C call.
# Cython's bounds checks stay on; tests/test_daycols_twin.py holds the source and the build
# to the same sections, coins and verdicts, line for line.
cimport cython

cdef object _LEVELS, _LEVELS_OUT, _WHITESPACE, _INT64
cdef dict _SIDES, _RANGE, _DTYPE
cdef tuple _NOT_COLS
cdef Py_ssize_t _NO_ROW, _PREFIX, _ROOM, _PIECE


cdef class Col:
    cdef public str code
    cdef public long long lo, hi
    cdef public Py_ssize_t n, k, cap
    cdef public list full
    cdef public object a
    cdef long long[:] v

    cpdef int push(self, long long value) except -1

    @cython.locals(m=Py_ssize_t, at=Py_ssize_t, take=Py_ssize_t)
    cpdef int push_many(self, values) except -1

    cdef int _next(self) except -1

    cpdef int truncate(self, Py_ssize_t n) except -1


cdef class DayColumns:
    cdef public dict ids
    cdef public set failed
    cdef dict _strings
    cdef public object t
    cdef readonly dict cols
    cdef Col _kind, _coin, _row, _b_time, _b_nlev, _b_lv, _tr_start
    cdef Col _p_t, _p_coin, _p_time, _p_tid, _p_px, _p_sz, _p_side, _p_str
    cdef Col _c_str, _c_mark, _c_oracle, _c_fund
    cdef Col _b_px, _b_sz, _b_n
    cdef bytearray _alt
    cdef public Py_ssize_t width
    cdef Py_ssize_t _books, _trades, _ctxs

    cpdef Py_ssize_t coin_id(self, str name) except -1

    cpdef Py_ssize_t text(self, str value) except -1

    @cython.locals(n=Py_ssize_t, i=Py_ssize_t, raw=bytes, reads=list)
    cpdef add(self, list raws, list lines, Py_ssize_t base, list read=*)

    @cython.locals(coin=Py_ssize_t, c=Py_ssize_t)
    cdef Py_ssize_t _trades_coin(self, list prints) except -2

    @cython.locals(levels=bytes, bids=Py_ssize_t)
    cdef Py_ssize_t _book(self, data, bytes raw, Py_ssize_t base, bint alone, got) except -2

    @cython.locals(every=list, pxs=list, szs=list, ns=list)
    cdef Py_ssize_t _book_slow(self, data, bytes raw, Py_ssize_t base, bint alone,
                               bytes levels) except -2

    cdef Py_ssize_t _kept(self, Py_ssize_t at, Py_ssize_t length) except -2

    @cython.locals(px=Col, sz=Col, n=Col, mark=Py_ssize_t)
    cdef bint _levels(self, data, pxs, szs, ns) except -1

    cdef int _sides(self, Py_ssize_t bids, Py_ssize_t asks) except -1

    @cython.locals(e8s=list, k=Py_ssize_t, fit=bint)
    cdef Py_ssize_t _trades_of(self, list prints, t, bint alone) except -2

    cdef Py_ssize_t _ctx(self, str coin, ctx, bint alone) except -2


@cython.locals(at=Py_ssize_t)
cdef Py_ssize_t _found(bytes raw, bytes part) except -2

cdef bint _fits(value) except -1
