# Static types for engine/fills.py when compiled (setup.py): the orders, markets and
# accounts the rules touch are read as C structs (engine/state.pxd).
cimport cython

from engine.state cimport Account, AssetState, OpenOrder


cpdef object reduce_only_room(OpenOrder order)

@cython.locals(acct=Account)
cpdef fill(eng, OpenOrder order, t, px, q, quote)

cpdef take(eng, OpenOrder order, list side, lot, t, book_time)

@cython.locals(order=OpenOrder)
cpdef activate(eng, AssetState a, book, t)

cdef bint goes_through(OpenOrder order, px, time) except -1

@cython.locals(order=OpenOrder)
cpdef bint fills_nothing(AssetState a, px, time) except -1

@cython.locals(order=OpenOrder)
cpdef on_print(eng, AssetState a, t, px, sz, time, tid)

@cython.locals(last=object, tids=set)
cpdef bint fresh(AssetState a, time, tid) except -1


cdef class PrintColumns:
    cdef readonly list states
    cdef readonly const long long[:] starts, t, time, tid, px, sz
    cdef readonly const short[:] coin
    cdef readonly unsigned char[:] new

    @cython.locals(k=Py_ssize_t, a=AssetState)
    cpdef bint fill_nothing(self, Py_ssize_t first, Py_ssize_t end) except -1

    # print by print, each print's outcome written to ``new``
    @cython.locals(k=Py_ssize_t, a=AssetState)
    cpdef apply_each(self, Py_ssize_t first, Py_ssize_t end)

    # per coin, C arrays: only the prints at a coin's latest time become Python integers
    @cython.locals(n=Py_ssize_t, k=Py_ssize_t, c=Py_ssize_t, a=AssetState, tids=set,
                   seen=list, latest=cython.longlong[:], price=cython.longlong[:],
                   touched=cython.uchar[:], outcome=cython.uchar[:])
    cpdef apply_last(self, Py_ssize_t first, Py_ssize_t end)


cdef object _int64s(Py_ssize_t n)
