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
